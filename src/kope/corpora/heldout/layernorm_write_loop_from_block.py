"""Triton LayerNorm over the last dimension: one program per row, fp32 statistics.

A row that fits in one block is read once and kept in registers; longer rows loop over
column blocks (mean, then centred variance, then the normalised write), so the block size
and register use stay bounded for any row length.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
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
        mean = tl.sum(x, axis=0) / n_cols
        xc = tl.where(mask, x - mean, 0.0)
        var = tl.sum(xc * xc, axis=0) / n_cols
        rstd = 1.0 / tl.sqrt(var + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = xc * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = cols < n_cols
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            xc = tl.where(mask, x - mean, 0.0)
            acc += xc * xc
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(BLOCK_N, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = cols < n_cols
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            y = (x - mean) * rstd * w + b
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))
        self.eps = 1e-5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols).contiguous()
        y = torch.empty_like(x2)
        n_rows = x2.shape[0]
        block_n = min(triton.next_power_of_2(n_cols), 4096)
        single = block_n >= n_cols
        num_warps = min(max(block_n // 256, 1), 16)
        _layernorm_kernel[(n_rows,)](
            x2, self.weight, self.bias, y,
            n_cols, x2.stride(0), y.stride(0), self.eps,
            BLOCK_N=block_n, SINGLE_BLOCK=single, num_warps=num_warps,
        )
        return y.view(x.shape)
