import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sum(row_ptr, n_cols, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0)
    return tl.sum(acc, axis=0)


@triton.jit
def _row_sq_dev(row_ptr, n_cols, mean, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(row_ptr + cols, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    return tl.sum(acc, axis=0)


@triton.jit
def row_std_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = x_ptr + row * stride_row
    mean = _row_sum(row_ptr, n_cols, BLOCK) / n_cols
    ssd = _row_sq_dev(row_ptr, n_cols, mean, BLOCK)
    var = ssd / (n_cols - 1)
    tl.store(out_ptr + row, tl.sqrt(var))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        row_std_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=512)
        return out
