import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_l2_kernel(X, Out, N, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = X + row * stride_row
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        v = tl.load(base + idx, mask=idx < N, other=0.0).to(tl.float32)
        acc += v * v
    sq = tl.sum(acc, axis=0)
    tl.store(Out + row, tl.sqrt(sq + 1e-6))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty(M, device=x.device, dtype=x.dtype)
        row_l2_kernel[(M,)](x, out, N, x.stride(0), BLOCK=512)
        return out
