import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    row_start = x_ptr + row * stride_row
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(row_start + cols, mask=cols < n_cols, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        row_sum_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=1024)
        return out
