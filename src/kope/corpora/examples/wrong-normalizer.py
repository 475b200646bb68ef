"""Knowledge-base example (wrong-normalizer): the rmsnorm suite kernel with one bug.

The single-block mean of squares divides by the block width BLOCK_N instead of the row length n_cols.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_kernel(
    x_ptr, w_ptr, y_ptr,
    n_cols, stride_x, stride_y, eps,
    BLOCK_N: tl.constexpr, SINGLE_BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    if SINGLE_BLOCK:
        cols = tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / BLOCK_N + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = cols < n_cols
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols).contiguous()
        y = torch.empty_like(x2)
        block_n = min(triton.next_power_of_2(n_cols), 4096)
        num_warps = min(max(block_n // 256, 1), 16)
        _rmsnorm_kernel[(x2.shape[0],)](
            x2, self.weight, y,
            n_cols, x2.stride(0), y.stride(0), self.eps,
            BLOCK_N=block_n, SINGLE_BLOCK=block_n >= n_cols, num_warps=num_warps,
        )
        return y.view(x.shape)
