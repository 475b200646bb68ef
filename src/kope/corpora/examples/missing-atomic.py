"""Knowledge-base example (missing-atomic): cross-entropy fused into one launch, with one bug.

Each program computes one row's loss and adds loss / batch into the zero-initialised 0-d output.
The add is written as tl.store, so the programs overwrite each other and one row's share survives.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_mean_kernel(logits_ptr, targets_ptr, out_ptr, n_cols, stride_row, scale, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    m = tl.full([BLOCK_N], -float("inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    m_row = tl.max(m, axis=0)
    lse = m_row + tl.log(tl.sum(s * tl.exp(m - m_row), axis=0))
    target = tl.load(targets_ptr + row)
    x_target = tl.load(row_ptr + target).to(tl.float32)
    tl.store(out_ptr, (lse - x_target) * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        targets = targets.contiguous()
        batch, n_cols = logits.shape
        out = torch.zeros((), device=logits.device, dtype=torch.float32)
        block_n = min(triton.next_power_of_2(n_cols), 2048)
        _cross_entropy_mean_kernel[(batch,)](
            logits, targets, out, n_cols, logits.stride(0), 1.0 / batch,
            BLOCK_N=block_n, num_warps=min(max(block_n // 256, 1), 8),
        )
        return out
