import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_r, stride_c, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    best = tl.full([BLOCK_R], float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_rows)
        ptrs = x_ptr + rows[:, None] * stride_r + cols[None, :] * stride_c
        tile = tl.load(ptrs, mask=mask, other=float("-inf"))
        best = tl.maximum(best, tl.max(tile, axis=1))
    tl.store(out_ptr + rows, best, mask=rows < n_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        BLOCK_R, BLOCK_C = 4, 512
        grid = (triton.cdiv(n_rows, BLOCK_R),)
        row_max_kernel[grid](x, out, n_rows, n_cols, x.stride(0), x.stride(1), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
        return out
