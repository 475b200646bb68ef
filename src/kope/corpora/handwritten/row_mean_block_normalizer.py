import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + row * row_stride + offs, mask=offs < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / BLOCK_SIZE
    tl.store(y_ptr + row, mean)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        row_mean_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK_SIZE=1024)
        return y
