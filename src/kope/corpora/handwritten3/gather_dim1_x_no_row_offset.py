import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gather_kernel(
    x_ptr, idx_ptr, out_ptr, N, K, scale,
    stride_xn, stride_xd, stride_in, stride_ik, stride_on, stride_ok,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = (rows[:, None] < N) & (cols[None, :] < K)
    idx = tl.load(idx_ptr + rows[:, None] * stride_in + cols[None, :] * stride_ik, mask=mask, other=0)
    vals = tl.load(x_ptr + idx * stride_xd, mask=mask, other=0.0)
    tl.store(out_ptr + rows[:, None] * stride_on + cols[None, :] * stride_ok, vals * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        N, K = index.shape
        out = torch.empty((N, K), device=x.device, dtype=x.dtype)
        grid = lambda META: (triton.cdiv(N, META["BLOCK_N"]), triton.cdiv(K, META["BLOCK_K"]))
        gather_kernel[grid](
            x, index, out, N, K, self.scale,
            x.stride(0), x.stride(1), index.stride(0), index.stride(1), out.stride(0), out.stride(1),
            BLOCK_N=8, BLOCK_K=64,
        )
        return out
