import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def cumprod_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = tl.full([1], 0.0, dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=1.0)
        scan = tl.associative_scan(x, 0, _mul)
        out = scan * carry
        tl.store(y_ptr + row * stride_y + cols, out, mask=mask)
        carry = carry * tl.reduce(x, 0, _mul)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        cumprod_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=256)
        return y
