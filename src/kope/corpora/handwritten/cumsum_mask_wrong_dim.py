import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_row, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    running = tl.zeros([BLOCK_R], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_rows)
        offs = rows[:, None] * stride_row + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        scanned = tl.cumsum(x, axis=1) + running[:, None]
        tl.store(y_ptr + offs, scanned, mask=mask)
        running += tl.sum(x, axis=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        BLOCK_R, BLOCK_C = 4, 128
        grid = (triton.cdiv(n_rows, BLOCK_R),)
        cumsum_rows_kernel[grid](x, y, n_rows, n_cols, x.stride(0), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
        return y
