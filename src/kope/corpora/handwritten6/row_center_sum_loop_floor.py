import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_center_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    # pass 1: the row's sum, chunk by chunk
    total = tl.zeros([BLOCK_N], dtype=tl.float32)
    for i in range(0, n_cols // BLOCK_N):
        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)
        vals = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        total += vals
    mean = tl.sum(total, axis=0) / n_cols
    # pass 2: subtract it
    for i in range(0, tl.cdiv(n_cols, BLOCK_N)):
        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)
        m = cols < n_cols
        vals = tl.load(x_row + cols, mask=m, other=0.0)
        tl.store(y_row + cols, vals - mean, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        row_center_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK_N=256)
        return y
