"""Knowledge-base example (numerical-instability): softmax in one online pass, with one bug.

The running max starts at -inf on every lane. Lanes past n_cols only ever see padding (-inf), so
their running max stays -inf and exp(m - m_new) is exp(-inf - (-inf)) = NaN, which poisons the sum.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def _softmax_online_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    d = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        d = d * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    inv_sum = 1.0 / tl.sum(d * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(out_row + offs, (tl.exp(x - row_max) * inv_sum).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        out = torch.empty_like(x2)
        block = min(triton.next_power_of_2(n_cols), MAX_BLOCK)
        _softmax_online_kernel[(x2.shape[0],)](
            x2, out, n_cols, x2.stride(0), out.stride(0), BLOCK=block, num_warps=max(1, min(16, block // 256)),
        )
        return out.view(x.shape)
