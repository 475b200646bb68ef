"""Triton kernel for the maximum over the last dimension: one program per row.

Each program walks its row in power-of-two column blocks (at most 4096 wide, so a row that fits is
a single vectorized load), keeps a per-lane running maximum (masked lanes read -inf) and reduces
across lanes once at the end.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def _row_max_kernel(x_ptr, out_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)
    acc = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs <= n_cols, other=-float("inf")).to(tl.float32)
        acc = tl.maximum(acc, x)
    tl.store(out_ptr + row, tl.max(acc, axis=0).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
        block = min(triton.next_power_of_2(n_cols), MAX_BLOCK)
        num_warps = max(1, min(16, block // 256))
        _row_max_kernel[(x2.shape[0],)](x2, out, n_cols, x2.stride(0), BLOCK=block, num_warps=num_warps)
        return out
