"""KernelBench level 2, 81_Gemm_Swish_Divide_Clamp_Tanh_Clamp: the GEMM (nn.Linear) stays in PyTorch; Swish, the division, the clamps and tanh run fused in one Triton kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _epilogue(v_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    v = tl.minimum(tl.maximum(v * tl.sigmoid(v) / 2.0, -1.0), 1.0)
    y = 1.0 - 2.0 / (tl.exp(2.0 * v) + 1.0)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        v = self.gemm(x).contiguous()
        out = torch.empty_like(v)
        n = v.numel()
        _epilogue[(triton.cdiv(n, 1024),)](v, out, n, BLOCK=1024)
        return out
