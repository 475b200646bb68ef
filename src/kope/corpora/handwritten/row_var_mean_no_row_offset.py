import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, mean_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(mean_ptr + row, tl.sum(acc, axis=0) / n_cols)


@triton.jit
def row_var_kernel(x_ptr, mean_ptr, var_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    mean = tl.load(mean_ptr)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    tl.store(var_ptr + row, tl.sum(acc, axis=0) / n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        means = torch.empty(n_rows, device=x.device, dtype=torch.float32)
        out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        row_mean_kernel[(n_rows,)](x, means, n_cols, x.stride(0), BLOCK=512)
        row_var_kernel[(n_rows,)](x, means, out, n_cols, x.stride(0), BLOCK=512)
        return out
