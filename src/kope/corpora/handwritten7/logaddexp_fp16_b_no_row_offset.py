import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _logaddexp(a, b):
    m = tl.maximum(a, b)
    return m + tl.log(tl.exp(a - m) + tl.exp(b - m))


@triton.jit
def logaddexp_kernel(a_ptr, b_ptr, out_ptr, n_cols, stride_a, stride_b, stride_o, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * stride_a + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = _logaddexp(a, b)
    tl.store(out_ptr + row * stride_o + cols, y.to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n_rows, n_cols = a.shape
        grid = lambda meta: (n_rows, triton.cdiv(n_cols, meta["BLOCK"]))
        logaddexp_kernel[grid](a, b, out, n_cols, a.stride(0), b.stride(0), out.stride(0), BLOCK=128)
        return out
