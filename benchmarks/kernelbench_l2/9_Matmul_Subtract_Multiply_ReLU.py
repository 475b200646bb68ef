"""KernelBench level 2, 9_Matmul_Subtract_Multiply_ReLU: the GEMM (nn.Linear) stays in PyTorch; the subtraction, multiplication and ReLU run fused in one Triton kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _epilogue(v_ptr, out_ptr, n, p0, p1, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    y = tl.maximum((v - p0) * p1, 0.0)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        v = self.linear(x).contiguous()
        out = torch.empty_like(v)
        n = v.numel()
        _epilogue[(triton.cdiv(n, 1024),)](v, out, n, self.subtract_value, self.multiply_value, BLOCK=1024)
        return out
