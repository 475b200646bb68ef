import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def exclusive_cumsum_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
        inclusive = tl.cumsum(x, axis=0)
        y = inclusive + carry
        tl.store(y_ptr + row * stride_y + cols, y, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        exclusive_cumsum_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=256)
        return y
