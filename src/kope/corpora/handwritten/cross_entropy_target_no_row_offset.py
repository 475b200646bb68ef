import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ce_row_kernel(logits_ptr, targets_ptr, losses_ptr, n_classes, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_classes
    row_ptr = logits_ptr + row * stride
    logits = tl.load(row_ptr + cols, mask=mask, other=float("-inf"))
    m = tl.max(logits, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(logits - m), axis=0))
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(logits_ptr + target)
    tl.store(losses_ptr + row, lse - target_logit)


@triton.jit
def mean_kernel(losses_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    vals = tl.load(losses_ptr + offs, mask=offs < n_rows, other=0.0)
    tl.store(out_ptr, tl.sum(vals, axis=0) / n_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        n_rows, n_classes = logits.shape
        losses = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
        ce_row_kernel[(n_rows,)](
            logits, targets, losses, n_classes, logits.stride(0), BLOCK=triton.next_power_of_2(n_classes),
        )
        out = torch.empty((), device=logits.device, dtype=logits.dtype)
        mean_kernel[(1,)](losses, out, n_rows, BLOCK=triton.next_power_of_2(n_rows))
        return out
