"""Knowledge-base example (index-shift): the silu suite kernel with one bug.

The load address is offs + 1, so every output is computed from its right-hand neighbour.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _silu_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs + 1, mask=mask, other=0.0).to(tl.float32)
    z = tl.exp(-tl.abs(x))
    sig = tl.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))
    tl.store(out_ptr + offs, (x * sig).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n_elements = x.numel()
        grid = (triton.cdiv(n_elements, BLOCK),)
        _silu_kernel[grid](x, out, n_elements, BLOCK=BLOCK, num_warps=4)
        return out
