import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride_x, stride_y, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / n_cols
    rstd = tl.rsqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = x * rstd * w
    tl.store(y_ptr + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        y = torch.empty_like(x2)
        BLOCK_SIZE = triton.next_power_of_2(shape[-1])
        rmsnorm_kernel[(x2.shape[0],)](
            x2, self.weight, y, x2.stride(0), y.stride(0), shape[-1], self.eps, BLOCK_SIZE=BLOCK_SIZE,
        )
        return y.view(shape)
