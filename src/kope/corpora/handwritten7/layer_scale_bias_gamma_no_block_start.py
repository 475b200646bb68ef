import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_shift_kernel(
    x_ptr, gamma_ptr, beta_ptr, out_ptr, M, N, stride_xm, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offs_n = tl.program_id(1) * BLOCK_N + cols
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :], mask=mask, other=0.0)
    gamma = tl.load(gamma_ptr + cols, mask=offs_n < N, other=0.0)
    beta = tl.load(beta_ptr + offs_n, mask=offs_n < N, other=0.0)
    y = x * gamma[None, :] + beta[None, :]
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))
        self.beta = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_M, BLOCK_N = 32, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        scale_shift_kernel[grid](
            x, self.gamma, self.beta, out, M, N, x.stride(0), out.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N
        )
        return out
