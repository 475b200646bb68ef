import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def var_dim0_kernel(x_ptr, out_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    ACC: tl.constexpr):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N
    acc_sum = tl.zeros([BLOCK_N], dtype=ACC)
    acc_sq = tl.zeros([BLOCK_N], dtype=ACC)
    for m0 in range(0, M, BLOCK_M):
        offs_m = m0 + tl.arange(0, BLOCK_M)
        mask = (offs_m[:, None] < M) & n_mask[None, :]
        x = tl.load(x_ptr + offs_m[:, None] * stride_m + offs_n[None, :] * stride_n, mask=mask, other=0.0)
        x = x.to(ACC)
        acc_sum += tl.sum(x, axis=0)
        acc_sq += tl.sum(x * x, axis=0)
    inv_m = 1.0 / M
    mean = acc_sum * inv_m
    var = acc_sq * inv_m - mean * mean
    var = tl.maximum(var, 0.0)
    tl.store(out_ptr + offs_n, var.to(tl.float16), mask=n_mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N = x.shape
        out = torch.empty((N,), device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_N = 64, 64
        grid = (triton.cdiv(N, BLOCK_N),)
        var_dim0_kernel[grid](x, out, M, N, x.stride(0), x.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                              ACC=tl.float16 if x.dtype == torch.float16 else tl.float32)
        return out
