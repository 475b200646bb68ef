import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def strided_add_kernel(
    x_ptr, y_ptr, out_ptr, M, N,
    stride_xm, stride_xn, stride_ym, stride_yn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask, other=0.0)
    y = tl.load(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, mask=mask, other=0.0)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, x + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        M, N = x.shape
        yt = y.t()  # a view: no copy, the kernel walks it with its strides
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        strided_add_kernel[grid](
            x, yt, out, M, N,
            x.stride(0), x.stride(1), yt.stride(1), yt.stride(0), out.stride(0), out.stride(1),
            BLOCK_M=32, BLOCK_N=32,
        )
        return out
