import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sq_dist(x1_row, x2_row, D, eps, BLOCK_D: tl.constexpr):
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        offs = d0 + tl.arange(0, BLOCK_D)
        m = offs < D
        u = tl.load(x1_row + offs, mask=m, other=0.0)
        v = tl.load(x2_row + offs, mask=m, other=0.0)
        diff = tl.where(m, u - v + eps, 0.0)
        acc += diff * diff
    return tl.sum(acc, axis=0)


@triton.jit
def triplet_rows_kernel(a_ptr, p_ptr, n_ptr, loss_ptr, D, stride_a, stride_p, stride_n, margin, eps,
                        BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    d_ap = tl.sqrt(_sq_dist(a_ptr + row * stride_a, p_ptr + row * stride_p, D, eps, BLOCK_D))
    d_an = tl.sqrt(_sq_dist(a_ptr + row * stride_a, n_ptr, D, eps, BLOCK_D))
    loss = tl.maximum(d_ap - d_an + margin, 0.0)
    tl.store(loss_ptr + row, loss)


@triton.jit
def mean_kernel(loss_ptr, out_ptr, B, BLOCK_B: tl.constexpr):
    total = tl.zeros([BLOCK_B], dtype=tl.float32)
    for b0 in range(0, B, BLOCK_B):
        offs = b0 + tl.arange(0, BLOCK_B)
        total += tl.load(loss_ptr + offs, mask=offs < B, other=0.0)
    tl.store(out_ptr, tl.sum(total, axis=0) / B)


class ModelNew(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        B, D = anchor.shape
        losses = torch.empty((B,), device=anchor.device, dtype=torch.float32)
        triplet_rows_kernel[(B,)](
            anchor, positive, negative, losses, D,
            anchor.stride(0), positive.stride(0), negative.stride(0),
            self.margin, 1e-6, BLOCK_D=256,
        )
        out = torch.empty((), device=anchor.device, dtype=torch.float32)
        mean_kernel[(1,)](losses, out, B, BLOCK_B=64)
        return out
