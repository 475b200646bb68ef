"""Knowledge-base example (api-misuse): the relu suite kernel with one bug.

Its block size is a runtime parameter, so `tl.arange(0, BLOCK)` is refused ("arange's arguments must be of type
tl.constexpr") and the kernel never runs.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _relu_kernel(x_ptr, out_ptr, n_elements, BLOCK):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.where(x < 0, 0.0, x)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n_elements = x.numel()
        grid = (triton.cdiv(n_elements, BLOCK),)
        _relu_kernel[grid](x, out, n_elements, BLOCK=BLOCK, num_warps=4)
        return out
