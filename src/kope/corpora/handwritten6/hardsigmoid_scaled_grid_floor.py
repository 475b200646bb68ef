import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 512}, num_warps=2),
    ],
    key=["n"],
)
@triton.jit
def hardsigmoid_scaled_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    hs = x * (1.0 / 6.0) + 0.5
    hs = tl.minimum(tl.maximum(hs, 0.0), 1.0)
    tl.store(y_ptr + offs, hs * alpha, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = lambda META: (n // META["BLOCK"],)
        hardsigmoid_scaled_kernel[grid](x, y, n, self.alpha)
        return y
