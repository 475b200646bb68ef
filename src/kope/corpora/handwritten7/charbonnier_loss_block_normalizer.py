import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def charbonnier_kernel(x_ptr, y_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    d = x - y
    v = tl.sqrt(d * d + eps * eps)
    v = tl.where(mask, v, 0.0)
    tl.atomic_add(out_ptr, tl.sum(v, axis=0) / BLOCK)


class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        n = x.numel()
        out = torch.zeros(1, device=x.device, dtype=torch.float32)
        BLOCK = 1024
        charbonnier_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, self.eps, BLOCK=BLOCK)
        return out.reshape(())
