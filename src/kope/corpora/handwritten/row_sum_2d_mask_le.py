import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_tile_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_r, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    r = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_R], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        c = c0 + tl.arange(0, BLOCK_C)
        m = (r[:, None] < n_rows) & (c[None, :] <= n_cols)
        tile = tl.load(x_ptr + r[:, None] * stride_r + c[None, :], mask=m, other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(out_ptr + r, acc, mask=r < n_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        BLOCK_R, BLOCK_C = 8, 256
        grid = (triton.cdiv(n_rows, BLOCK_R),)
        row_sum_tile_kernel[grid](x, out, n_rows, n_cols, x.stride(0), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
        return out
