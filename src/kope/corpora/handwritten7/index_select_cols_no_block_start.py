import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def index_select_cols_kernel(
    x_ptr,
    idx_ptr,
    out_ptr,
    M,
    K,
    stride_xm,
    stride_xn,
    stride_om,
    stride_ok,
    BLOCK_M: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    idx = tl.load(idx_ptr + offs_k, mask=offs_k < K, other=0)
    mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)
    vals = tl.load(x_ptr + offs_m[:, None] * stride_xm + idx[None, :] * stride_xn, mask=mask, other=0.0)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_k[None, :] * stride_ok, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        M = x.shape[0]
        K = idx.shape[0]
        out = torch.empty((M, K), device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_K = 16, 16
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(K, BLOCK_K))
        index_select_cols_kernel[grid](
            x,
            idx,
            out,
            M,
            K,
            x.stride(0),
            x.stride(1),
            out.stride(0),
            out.stride(1),
            BLOCK_M=BLOCK_M,
            BLOCK_K=BLOCK_K,
        )
        return out
