import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=8),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def linear_silu_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_bm, stride_bn,
    stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_idx = k * BLOCK_K + offs_k
        a = tl.load(
            x_ptr + offs_m[:, None] * stride_xm + k_idx[None, :] * stride_xk,
            mask=(offs_m[:, None] < M) & (k_idx[None, :] < K),
            other=0.0,
        )
        # W is (N, K); read it as W^T (K, N)
        b = tl.load(
            w_ptr + k_idx[:, None] * stride_wk + offs_n[None, :] * stride_wn,
            mask=(k_idx[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b)
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    # the bias comes in as an (M, N) broadcast view
    bias = tl.load(b_ptr + offs_m[:, None] * stride_bm + offs_n[None, :] * stride_bn, mask=out_mask, other=0.0)
    acc = acc + bias
    out = acc * tl.sigmoid(acc)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on, out, mask=out_mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, K = x.shape
        w = self.linear.weight
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        bias2d = self.linear.bias.view(1, N).expand(M, N)
        grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
        linear_silu_kernel[grid](
            x, w, bias2d, out,
            M, N, K,
            x.stride(0), x.stride(1),
            w.stride(0), w.stride(1),
            bias2d.stride(1), bias2d.stride(0),
            out.stride(0), out.stride(1),
        )
        return out
