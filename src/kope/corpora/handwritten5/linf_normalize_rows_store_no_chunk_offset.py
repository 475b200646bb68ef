import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _row_absmax(row_ptr, n_cols, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0)
        acc = tl.maximum(acc, tl.abs(v))
    return tl.reduce(acc, 0, _max_combine)


@triton.jit
def linf_normalize_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    norm = _row_absmax(x_row, n_cols, BLOCK)
    denom = tl.maximum(norm, eps)
    for off in range(0, n_cols, BLOCK):
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        v = tl.load(x_row + cols, mask=m, other=0.0)
        tl.store(y_row + cols, v / denom, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        linf_normalize_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), 1e-12, BLOCK=512)
        return y
