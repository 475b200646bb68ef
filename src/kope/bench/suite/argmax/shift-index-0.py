"""Triton kernel for argmax over the last dimension (int64 output): one program per row.

Each program walks its row in power-of-two column blocks (at most 4096 wide) keeping, per lane,
the best value and the first column that reached it (strict > keeps the earliest). The final
cross-lane step takes the smallest column among lanes holding the row maximum, so ties resolve to
the first occurrence, as in torch.argmax.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def _argmax_kernel(x_ptr, out_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)
    best_val = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    best_idx = tl.zeros([BLOCK], dtype=tl.int32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs + 1, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        better = x > best_val
        best_val = tl.where(better, x, best_val)
        best_idx = tl.where(better, offs, best_idx)
    row_max = tl.max(best_val, axis=0)
    idx = tl.min(tl.where(best_val == row_max, best_idx, n_cols), axis=0)
    tl.store(out_ptr + row, idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        out = torch.empty(x.shape[:-1], dtype=torch.int64, device=x.device)
        block = min(triton.next_power_of_2(n_cols), MAX_BLOCK)
        num_warps = max(1, min(16, block // 256))
        _argmax_kernel[(x2.shape[0],)](x2, out, n_cols, x2.stride(0), BLOCK=block, num_warps=num_warps)
        return out
