import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tril_kernel(
    x_ptr, out_ptr, M, N, diagonal,
    stride_xb, stride_xm, stride_xn,
    stride_ob, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    b = tl.program_id(0)
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(2)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    in_bounds = (rows[:, None] < M) & (cols[None, :] < N)
    keep = (cols[None, :] - rows[:, None]) < diagonal
    x = tl.load(x_ptr + b * stride_xb + rows[:, None] * stride_xm + cols[None, :] * stride_xn,
                mask=in_bounds & keep, other=0.0)
    tl.store(out_ptr + b * stride_ob + rows[:, None] * stride_om + cols[None, :] * stride_on,
             x, mask=in_bounds)


class ModelNew(nn.Module):
    def __init__(self, diagonal: int):
        super().__init__()
        self.diagonal = diagonal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, M, N = x.shape
        out = torch.empty_like(x)
        grid = lambda META: (B, triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
        tril_kernel[grid](
            x, out, M, N, self.diagonal,
            x.stride(0), x.stride(1), x.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            BLOCK_M=32, BLOCK_N=64,
        )
        return out
