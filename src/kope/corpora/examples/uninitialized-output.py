"""Knowledge-base example (uninitialized-output): ReLU that writes only the positive elements.

The kernel stores x where x > 0 and relies on the output already holding zeros elsewhere, but the
output is allocated with torch.empty: every non-positive position is left uninitialised.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _relu_positive_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x, mask=mask & (x > 0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n_elements = x.numel()
        grid = (triton.cdiv(n_elements, BLOCK),)
        _relu_positive_kernel[grid](x, out, n_elements, BLOCK=BLOCK, num_warps=4)
        return out
