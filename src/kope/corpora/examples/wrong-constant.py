"""Knowledge-base example (wrong-constant): the gelu_tanh suite kernel with one bug.

sqrt(2/pi) is written with its decimal point one place off (0.0797... instead of 0.7978...).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _gelu_tanh_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    sqrt_2_over_pi = 0.07978845608028654
    u = sqrt_2_over_pi * (x + 0.044715 * x * x * x)
    z = tl.exp(-2.0 * tl.abs(u))
    sig = tl.where(u >= 0, 1.0 / (1.0 + z), z / (1.0 + z))
    tl.store(out_ptr + offs, (x * sig).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n_elements = x.numel()
        grid = (triton.cdiv(n_elements, BLOCK),)
        _gelu_tanh_kernel[grid](x, out, n_elements, BLOCK=BLOCK, num_warps=4)
        return out
