import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def prelu_kernel(
    x_ptr, w_ptr, out_ptr, C, L,
    stride_xn, stride_xc, stride_xl,
    stride_on, stride_oc, stride_ol,
    BLOCK_L: tl.constexpr,
):
    pid_nc = tl.program_id(0)
    pid_l = tl.program_id(1)
    n = pid_nc // C
    c = pid_nc % C
    offs = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    mask = offs < L
    x = tl.load(x_ptr + n * stride_xn + c * stride_xc + offs * stride_xl, mask=mask, other=0.0)
    w = tl.load(w_ptr + c)
    y = tl.where(x >= 0, x, w * x)
    tl.store(out_ptr + n * stride_on + c * stride_oc + offs * stride_ol, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.05, 0.8, channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        N, C, L = x.shape
        out = torch.empty_like(x)
        BLOCK_L = 256
        grid = (N * C, triton.cdiv(L, BLOCK_L))
        prelu_kernel[grid](
            x, self.weight, out, C, L,
            x.stride(0), x.stride(2), x.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            BLOCK_L=BLOCK_L,
        )
        return out
