import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bn_infer_kernel(
    x_ptr, y_ptr, mean_ptr, var_ptr, w_ptr, b_ptr,
    C, L, stride_n, stride_c, eps,
    BLOCK_C: tl.constexpr, BLOCK_L: tl.constexpr,
):
    n = tl.program_id(0)
    pid_c = tl.program_id(1)
    pid_l = tl.program_id(2)
    ch = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    pos = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    cmask = ch < C
    mask = cmask[:, None] & (pos[None, :] < L)
    offs = n * stride_n + ch[:, None] * stride_c + pos[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.load(mean_ptr + ch, mask=cmask, other=0.0)
    var = tl.load(var_ptr + ch, mask=cmask, other=1.0)
    w = tl.load(w_ptr + ch, mask=cmask, other=0.0)
    b = tl.load(b_ptr + ch, mask=cmask, other=0.0)
    inv_std = 1.0 / (tl.sqrt(var) + eps)
    scale = w * inv_std
    shift = b - mean * scale
    y = x * scale[:, None] + shift[:, None]
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))
        self.register_buffer("running_mean", torch.randn(channels))
        self.register_buffer("running_var", torch.rand(channels) * 0.05 + 0.001)
        self.eps = 1e-3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C, L = x.shape
        y = torch.empty_like(x)
        BLOCK_C, BLOCK_L = 32, 32
        grid = (N, triton.cdiv(C, BLOCK_C), triton.cdiv(L, BLOCK_L))
        bn_infer_kernel[grid](
            x, y, self.running_mean, self.running_var, self.weight, self.bias,
            C, L, x.stride(0), x.stride(1), self.eps,
            BLOCK_C=BLOCK_C, BLOCK_L=BLOCK_L,
        )
        return y
