import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=-float("inf"))
    row_max = tl.min(x, axis=0)
    total = tl.sum(tl.exp(x - row_max), axis=0)
    tl.store(out_ptr + row, row_max + tl.log(total))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        BLOCK = triton.next_power_of_2(n_cols)
        logsumexp_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=BLOCK)
        return out
