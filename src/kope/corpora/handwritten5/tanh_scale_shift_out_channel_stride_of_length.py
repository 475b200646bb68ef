import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tanh_scale_shift_kernel(
    x_ptr, a_ptr, b_ptr, out_ptr,
    C, L,
    stride_xb, stride_xc, stride_xl,
    stride_ob, stride_oc, stride_ol,
    BLOCK_C: tl.constexpr, BLOCK_L: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_c = tl.program_id(1)
    pid_l = tl.program_id(2)
    offs_c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    mask = (offs_c[:, None] < C) & (offs_l[None, :] < L)
    x_ptrs = x_ptr + pid_b * stride_xb + offs_c[:, None] * stride_xc + offs_l[None, :] * stride_xl
    x = tl.load(x_ptrs, mask=mask, other=0.0)
    a = tl.load(a_ptr + offs_c, mask=offs_c < C, other=0.0)
    b = tl.load(b_ptr + offs_c, mask=offs_c < C, other=0.0)
    # tanh(x) = 1 - 2 / (exp(2x) + 1), safe at both ends
    t = 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)
    y = a[:, None] * t + b[:, None]
    o_ptrs = out_ptr + pid_b * stride_ob + offs_c[:, None] * stride_oc + offs_l[None, :] * stride_ol
    tl.store(o_ptrs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.a = nn.Parameter(torch.rand(channels) * 2.0 + 0.5)
        self.b = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, L = x.shape
        out = torch.empty_like(x)
        BLOCK_C, BLOCK_L = 32, 32
        grid = (B, triton.cdiv(C, BLOCK_C), triton.cdiv(L, BLOCK_L))
        tanh_scale_shift_kernel[grid](
            x, self.a, self.b, out,
            C, L,
            x.stride(0), x.stride(1), x.stride(2),
            out.stride(0), out.stride(2), out.stride(2),
            BLOCK_C=BLOCK_C, BLOCK_L=BLOCK_L,
        )
        return out
