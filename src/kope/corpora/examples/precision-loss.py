"""Knowledge-base example (precision-loss): the leaky_relu suite kernel with one bug.

The float32 input is rounded to float16 after the load, so every output carries a half-precision rounding error.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _leaky_relu_kernel(x_ptr, out_ptr, n_elements, negative_slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float16)
    y = tl.where(x > 0, x, x * negative_slope)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = float(negative_slope)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n_elements = x.numel()
        grid = (triton.cdiv(n_elements, BLOCK),)
        _leaky_relu_kernel[grid](x, out, n_elements, self.negative_slope, BLOCK=BLOCK, num_warps=4)
        return out
