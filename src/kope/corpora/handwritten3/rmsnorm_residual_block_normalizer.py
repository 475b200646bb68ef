import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mean_square(h, D):
    return tl.sum(h * h, axis=0) / D


@triton.jit
def rmsnorm_residual_kernel(
    x_ptr, r_ptr, w_ptr, out_ptr, D,
    stride_x, stride_r, stride_o, eps,
    BLOCK_D: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    r = tl.load(r_ptr + row * stride_r + cols, mask=mask, other=0.0)
    h = x + r
    ms = _mean_square(h, BLOCK_D)
    inv = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_o + cols, h * inv * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, hidden))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        B, D = x.shape
        out = torch.empty_like(x)
        BLOCK_D = triton.next_power_of_2(D)
        rmsnorm_residual_kernel[(B,)](
            x, residual, self.weight, out, D,
            x.stride(0), residual.stride(0), out.stride(0), self.eps,
            BLOCK_D=BLOCK_D,
        )
        return out
