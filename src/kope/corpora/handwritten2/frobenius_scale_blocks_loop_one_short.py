import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sumsq_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr, BLOCKS_PER_PROG: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, BLOCKS_PER_PROG - 1):
        offs = (pid * BLOCKS_PER_PROG + i) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc += x * x
    tl.atomic_add(acc_ptr, tl.sum(acc, axis=0))


@triton.jit
def scale_kernel(x_ptr, acc_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    norm = tl.sqrt(tl.load(acc_ptr))
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x / norm, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.numel()
        y = torch.empty_like(x)
        acc = torch.zeros(1, device=x.device, dtype=torch.float32)
        BLOCK, BLOCKS_PER_PROG = 512, 4
        sumsq_kernel[(triton.cdiv(n, BLOCK * BLOCKS_PER_PROG),)](x, acc, n, BLOCK=BLOCK, BLOCKS_PER_PROG=BLOCKS_PER_PROG)
        scale_kernel[(triton.cdiv(n, BLOCK),)](x, acc, y, n, BLOCK=BLOCK)
        return y
