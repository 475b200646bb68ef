import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sumsq(row_ptr, n_cols, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, tl.cdiv(n_cols, BLOCK)):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        cols = start * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    return tl.sum(acc, axis=0)


@triton.jit
def l2_normalize_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    norm = tl.sqrt(_row_sumsq(x_row, n_cols, BLOCK))
    inv = 1.0 / tl.maximum(norm, eps)
    for start in range(0, tl.cdiv(n_cols, BLOCK)):
        cols = start * BLOCK + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, x * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        BLOCK = 512
        l2_normalize_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), 1e-12, BLOCK=BLOCK)
        return y
