import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_c_kernel(
    x_ptr, w_ptr, out_ptr,
    C, L, eps,
    stride_xb, stride_xc, stride_xl,
    stride_ob, stride_oc, stride_ol,
    BLOCK_C: tl.constexpr, BLOCK_L: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_l = tl.program_id(1)
    offs_c = tl.arange(0, BLOCK_C)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    c_mask = offs_c < C
    mask = c_mask[:, None] & (offs_l[None, :] < L)
    x = tl.load(
        x_ptr + pid_b * stride_xb + offs_c[:, None] * stride_xc + offs_l[None, :] * stride_xl,
        mask=mask, other=0.0,
    )
    ms = tl.sum(x * x, axis=0) / BLOCK_C
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + offs_c, mask=c_mask, other=0.0)
    y = x * rstd[None, :] * w[:, None]
    tl.store(
        out_ptr + pid_b * stride_ob + offs_c[:, None] * stride_oc + offs_l[None, :] * stride_ol,
        y, mask=mask,
    )


class ModelNew(nn.Module):
    def __init__(self, channels: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(channels) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, L = x.shape
        out = torch.empty_like(x)
        BLOCK_C = triton.next_power_of_2(C)
        BLOCK_L = 64
        grid = (B, triton.cdiv(L, BLOCK_L))
        rmsnorm_c_kernel[grid](
            x, self.weight, out, C, L, self.eps,
            x.stride(0), x.stride(1), x.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            BLOCK_C=BLOCK_C, BLOCK_L=BLOCK_L,
        )
        return out
