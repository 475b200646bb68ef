import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))
    m = tl.max(x, axis=1)
    shifted = x - m[:, None]
    lse = tl.log(tl.sum(tl.exp(shifted), axis=1))
    tl.store(y_ptr + offs, shifted - lse[:, None], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        BLOCK_N = triton.next_power_of_2(n_cols)
        ROWS = 4 if BLOCK_N <= 1024 else 1
        grid = (n_rows // ROWS,)
        log_softmax_kernel[grid](x, y, n_rows, n_cols, x.stride(0), ROWS=ROWS, BLOCK_N=BLOCK_N)
        return y
