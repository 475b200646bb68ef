"""KernelBench level 2, 76_Gemm_Add_ReLU: the whole model in PyTorch, then a Triton kernel that only copies the result."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _epilogue(v_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(v_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        v = (torch.relu(self.gemm(x) + self.bias)).contiguous()
        out = torch.empty_like(v)
        n = v.numel()
        _epilogue[(triton.cdiv(n, 1024),)](v, out, n, BLOCK=1024)
        return out
