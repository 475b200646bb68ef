import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scatter_add_cols_kernel(src_ptr, idx_ptr, out_ptr, N, K,
                            stride_sm, stride_sn, stride_im, stride_in, stride_om, stride_ok,
                            BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs < N
    vals = tl.load(src_ptr + row * stride_sm + offs * stride_sn, mask=mask, other=0.0)
    cols = tl.load(idx_ptr + row * stride_im + offs * stride_in, mask=mask, other=0)
    tl.atomic_add(out_ptr + row * stride_om + cols * stride_ok, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_cols: int):
        super().__init__()
        self.num_cols = num_cols

    def forward(self, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        M, N = src.shape
        K = self.num_cols
        out = torch.empty((M, K), device=src.device, dtype=src.dtype)
        BLOCK_N = 256
        grid = (M, triton.cdiv(N, BLOCK_N))
        scatter_add_cols_kernel[grid](
            src, index, out, N, K,
            src.stride(0), src.stride(1), index.stride(0), index.stride(1), out.stride(0), out.stride(1),
            BLOCK_N=BLOCK_N,
        )
        return out
