"""Triton kernel for a row-broadcast bias add over a 2-D input, tiled in 2-D.

Each program owns a BLOCK_M x BLOCK_N tile (about 4096 elements) and loads its slice of the bias
once for all BLOCK_M rows, so the bias costs almost no bandwidth and there is no per-element
modulo; columns are the contiguous, vectorized axis. Narrow inputs get taller tiles so that each
program still moves a useful amount of data.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

TILE_ELEMENTS = 4096
MAX_BLOCK_N = 1024


@triton.jit
def _bias_add_kernel(
    x_ptr, bias_ptr, out_ptr, n_rows, n_cols, stride_x, stride_out,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = rows < n_rows
    col_mask = cols < n_cols
    mask = row_mask[:, None] & col_mask[None, :]
    bias = tl.load(bias_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    y = x + bias[:, None]
    tl.store(out_ptr + rows[:, None] * stride_out + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        bias = self.bias.contiguous()
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        block_n = min(triton.next_power_of_2(n_cols), MAX_BLOCK_N)
        block_m = min(triton.next_power_of_2(n_rows), max(1, TILE_ELEMENTS // block_n))
        num_warps = max(1, min(8, block_m * block_n // 512))
        grid = (triton.cdiv(n_rows, block_m), triton.cdiv(n_cols, block_n))
        _bias_add_kernel[grid](
            x, bias, out, n_rows, n_cols, x.stride(0), out.stride(0),
            BLOCK_M=block_m, BLOCK_N=block_n, num_warps=num_warps,
        )
        return out
