import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_fp16_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row * stride
    total = tl.zeros([1], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        prefix = tl.cumsum(x, axis=0) + total
        tl.store(y_ptr + base + offs, prefix.to(tl.float16), mask=mask)
        total += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        cumsum_fp16_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=1024)
        return y
