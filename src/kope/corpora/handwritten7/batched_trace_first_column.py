import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def trace_kernel(x_ptr, out_ptr, N, stride_b, stride_r, stride_c, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, tl.cdiv(N, BLOCK)):
        offs = k * BLOCK + tl.arange(0, BLOCK)
        mask = offs < N
        acc += tl.load(x_ptr + b * stride_b + offs * stride_r, mask=mask, other=0.0)
    tl.store(out_ptr + b, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, _ = x.shape
        out = torch.empty(B, device=x.device, dtype=x.dtype)
        trace_kernel[(B,)](x, out, N, x.stride(0), x.stride(1), x.stride(2), BLOCK=32)
        return out
