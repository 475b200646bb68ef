import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def avg_pool1d_kernel(
    x_ptr, y_ptr, L, L_out, stride_xn, stride_xc, stride_yn, stride_yc, C,
    KS: tl.constexpr, STRIDE: tl.constexpr, BLOCK_O: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_nc = tl.program_id(0)
    pid_o = tl.program_id(1)
    n = pid_nc // C
    c = pid_nc % C
    o = pid_o * BLOCK_O + tl.arange(0, BLOCK_O)
    k = tl.arange(0, BLOCK_K)
    pos = o[:, None] * STRIDE + k[None, :]
    mask = (o[:, None] < L_out) & (k[None, :] < KS)
    x = tl.load(x_ptr + n * stride_xn + c * stride_xc + pos, mask=mask, other=0.0)
    window_sum = tl.sum(x, axis=1)
    avg = window_sum / BLOCK_K
    tl.store(y_ptr + n * stride_yn + c * stride_yc + o, avg, mask=o < L_out)


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        N, C, L = x.shape
        L_out = (L - self.kernel_size) // self.stride + 1
        y = torch.empty(N, C, L_out, device=x.device, dtype=x.dtype)
        BLOCK_O = 64
        BLOCK_K = triton.next_power_of_2(self.kernel_size)
        grid = (N * C, triton.cdiv(L_out, BLOCK_O))
        avg_pool1d_kernel[grid](
            x, y, L, L_out, x.stride(0), x.stride(1), y.stride(0), y.stride(1), C,
            KS=self.kernel_size, STRIDE=self.stride, BLOCK_O=BLOCK_O, BLOCK_K=BLOCK_K,
        )
        return y
