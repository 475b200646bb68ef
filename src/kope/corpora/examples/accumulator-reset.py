"""Knowledge-base example (accumulator-reset): the cumsum suite kernel with one bug.

The scan's carry is re-initialised at the top of every chunk, so each chunk restarts its prefix sum from zero.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        carry = tl.zeros([1], dtype=tl.float32)
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols).contiguous()
        y = torch.empty_like(x2)
        block_n = min(triton.next_power_of_2(n_cols), 256)
        num_warps = max(block_n // 128, 1)
        _cumsum_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK_N=block_n, num_warps=num_warps,
        )
        return y.view(x.shape)
