"""KernelBench level 2, 86_Matmul_Divide_GELU: the GEMM (nn.Linear) stays in PyTorch; the division and exact GELU run fused in one Triton kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _epilogue(v_ptr, out_ptr, n, p0, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    v = v / p0
    y = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        v = self.linear(x).contiguous()
        out = torch.empty_like(v)
        n = v.numel()
        _epilogue[(triton.cdiv(n, 1024),)](v, out, n, self.divisor, BLOCK=1024)
        return out
