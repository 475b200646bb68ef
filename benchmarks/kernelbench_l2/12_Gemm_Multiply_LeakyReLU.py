"""KernelBench level 2, 12_Gemm_Multiply_LeakyReLU: the GEMM (nn.Linear) stays in PyTorch; the multiplier and LeakyReLU run fused in one Triton kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _epilogue(v_ptr, out_ptr, n, p0, p1, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    v = v * p0
    y = tl.where(v >= 0, v, v * p1)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        v = self.gemm(x).contiguous()
        out = torch.empty_like(v)
        n = v.numel()
        _epilogue[(triton.cdiv(n, 1024),)](v, out, n, self.multiplier, self.negative_slope, BLOCK=1024)
        return out
