import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_last_kernel(x_ptr, out_ptr, M, N, stride_b, stride_m, stride_n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // M
    m = pid % M
    row_off = m * stride_m
    carry = 0.0
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < N
        x = tl.load(x_ptr + row_off + offs * stride_n, mask=mask, other=0.0)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + row_off + offs * stride_n, y, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        B, M, N = x.shape
        cumsum_last_kernel[(B * M,)](x, out, M, N, x.stride(0), x.stride(1), x.stride(2), BLOCK=128)
        return out
