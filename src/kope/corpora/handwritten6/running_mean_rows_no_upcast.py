import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def running_mean_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = tl.zeros([], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = tl.arange(0, BLOCK)
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
        prefix = tl.cumsum(x, axis=0) + carry
        mean = prefix / (cols + 1).to(tl.float32)
        tl.store(y_ptr + row * stride_y + cols, mean.to(tl.float16), mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        running_mean_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=1024)
        return y
