import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def reverse_cumsum_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_row, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    offs = tl.arange(0, BLOCK_N)
    rev = n_cols - 1 - offs
    mask = (rows[:, None] < n_rows) & (offs[None, :] < n_cols)
    ptrs = rows[:, None] * stride_row + rev[None, :]
    x = tl.load(x_ptr + ptrs, mask=mask, other=0.0)
    s = tl.cumsum(x, axis=1) - x
    tl.store(y_ptr + ptrs, s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(n_cols)
        BLOCK_R = 4
        grid = lambda meta: (triton.cdiv(n_rows, meta["BLOCK_R"]),)
        reverse_cumsum_kernel[grid](x, y, n_rows, n_cols, x.stride(0), BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N)
        return y
