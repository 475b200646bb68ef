import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def masked_fill_kernel(x_ptr, mask_ptr, out_ptr, n, value, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    in_range = offs < n
    x = tl.load(x_ptr + offs, mask=in_range, other=0.0)
    m = tl.load(mask_ptr + offs, mask=in_range, other=0)
    out = tl.where(m != 0, value, x)
    tl.store(out_ptr + offs, out, mask=in_range & (m != 0))


class ModelNew(nn.Module):
    def __init__(self, value: float):
        super().__init__()
        self.value = value

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        mask_u8 = mask.contiguous().to(torch.uint8)
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        masked_fill_kernel[grid](x, mask_u8, out, n, self.value, BLOCK=BLOCK)
        return out
