import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def lerp_kernel(a_ptr, b_ptr, out_ptr, n, weight, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    num_progs = tl.num_programs(0)
    # grid-stride loop: each program walks over blocks pid, pid + num_progs, ...
    for block_start in range(pid * BLOCK, n, num_progs * BLOCK):
        offs = block_start + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        res = a + weight * (b - a)
        tl.store(out_ptr + tl.arange(0, BLOCK), res.to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, weight: float):
        super().__init__()
        self.weight = weight

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        BLOCK = 256
        num_programs = min(triton.cdiv(n, BLOCK), 16)
        lerp_kernel[(num_programs,)](a, b, out, n, self.weight, BLOCK=BLOCK)
        return out
