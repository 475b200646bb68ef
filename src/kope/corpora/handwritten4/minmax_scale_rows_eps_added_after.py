import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _min_combine(a, b):
    return tl.minimum(a, b)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def minmax_scale_kernel(
    x_ptr, out_ptr, n_cols, stride_x, stride_out, eps,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    o_row = out_ptr + row * stride_out
    run_min = tl.full([BLOCK], float("inf"), dtype=tl.float32)
    run_max = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        lo = tl.load(x_row + cols, mask=mask, other=float("inf"))
        hi = tl.load(x_row + cols, mask=mask, other=float("-inf"))
        run_min = tl.minimum(run_min, lo)
        run_max = tl.maximum(run_max, hi)
    row_min = tl.reduce(run_min, 0, _min_combine)
    row_max = tl.reduce(run_max, 0, _max_combine)
    inv = 1.0 / (row_max - row_min)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(o_row + cols, (x - row_min) * inv + eps, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        minmax_scale_kernel[(n_rows,)](
            x, out, n_cols, x.stride(0), out.stride(0), self.eps, BLOCK=256,
        )
        return out
