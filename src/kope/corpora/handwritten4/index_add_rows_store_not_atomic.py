import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def index_add_kernel(
    src_ptr, idx_ptr, out_ptr,
    D, stride_src, stride_out, alpha,
    BLOCK_D: tl.constexpr,
):
    i = tl.program_id(0)
    pid_d = tl.program_id(1)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    dst = tl.load(idx_ptr + i)
    vals = tl.load(src_ptr + i * stride_src + cols, mask=mask, other=0.0)
    tl.store(out_ptr + dst * stride_out + cols, vals * alpha, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, M: int, alpha: float):
        super().__init__()
        self.M = M
        self.alpha = alpha

    def forward(self, src: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        N, D = src.shape
        out = torch.zeros((self.M, D), device=src.device, dtype=src.dtype)
        BLOCK_D = 128
        grid = (N, triton.cdiv(D, BLOCK_D))
        index_add_kernel[grid](src, idx, out, D, src.stride(0), out.stride(0), self.alpha, BLOCK_D=BLOCK_D)
        return out
