"""Knowledge-base example (wrong-reduction-init): the softmax suite kernel with one bug.

The online pass's running sum starts at 0 although the running max starts from the first block's values, so the first block (exp(m - m) = 1 per lane) is missing from the normaliser.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr, SINGLE_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK)
    if SINGLE_BLOCK:
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
        tl.store(out_row + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
    else:
        # The row is longer than BLOCK, so the first block is full and every lane starts finite.
        m = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        d = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(BLOCK, n_cols, BLOCK):
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
            y = tl.exp(x - row_max) * inv_sum
            tl.store(out_row + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        out = torch.empty_like(x2)
        block = min(triton.next_power_of_2(n_cols), MAX_BLOCK)
        num_warps = max(1, min(16, block // 256))
        _softmax_kernel[(x2.shape[0],)](
            x2, out, n_cols, x2.stride(0), out.stride(0),
            BLOCK=block, SINGLE_BLOCK=n_cols <= block, num_warps=num_warps,
        )
        return out.view(x.shape)
