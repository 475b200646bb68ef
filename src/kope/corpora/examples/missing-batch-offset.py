"""Knowledge-base example (missing-batch-offset): the conv1d suite kernel with one bug.

The input base pointer leaves out pid_b * stride_xb, so every batch element is convolved from batch 0's input.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_kernel(
    x_ptr, w_ptr, bias_ptr, y_ptr,
    C_out, L_out, R,
    stride_xb, stride_xc, stride_xl,
    stride_wo, stride_wc, stride_wk,
    stride_yb, stride_yc, stride_yl,
    KERNEL_SIZE: tl.constexpr,
    BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_R: tl.constexpr,
):
    pid_l = tl.program_id(0)
    pid_co = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    mask_co = offs_co < C_out
    mask_l = offs_l < L_out
    x_base = x_ptr

    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        offs_r = r0 + tl.arange(0, BLOCK_R)
        mask_r = offs_r < R
        ci = offs_r // KERNEL_SIZE
        tap = offs_r % KERNEL_SIZE
        w = tl.load(
            w_ptr + offs_co[:, None] * stride_wo + ci[None, :] * stride_wc + tap[None, :] * stride_wk,
            mask=mask_co[:, None] & mask_r[None, :], other=0.0,
        )
        x = tl.load(
            x_base + ci[:, None] * stride_xc + (offs_l[None, :] + tap[:, None]) * stride_xl,
            mask=mask_r[:, None] & mask_l[None, :], other=0.0,
        )
        acc = tl.dot(w, x, acc, input_precision="ieee")

    bias = tl.load(bias_ptr + offs_co, mask=mask_co, other=0.0).to(tl.float32)
    acc += bias[:, None]
    y_ptrs = y_ptr + pid_b * stride_yb + offs_co[:, None] * stride_yc + offs_l[None, :] * stride_yl
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_co[:, None] & mask_l[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.conv.weight
        bias = self.conv.bias
        batch, c_in, l_in = x.shape
        c_out, _, ks = weight.shape
        l_out = l_in - ks + 1
        r = c_in * ks
        y = torch.empty((batch, c_out, l_out), device=x.device, dtype=x.dtype)
        block_co = min(64, max(16, triton.next_power_of_2(c_out)))
        block_l = min(128, max(16, triton.next_power_of_2(l_out)))
        block_r = min(32, max(16, triton.next_power_of_2(r)))
        grid = (triton.cdiv(l_out, block_l), triton.cdiv(c_out, block_co), batch)
        _conv1d_kernel[grid](
            x, weight, bias, y,
            c_out, l_out, r,
            x.stride(0), x.stride(1), x.stride(2),
            weight.stride(0), weight.stride(1), weight.stride(2),
            y.stride(0), y.stride(1), y.stride(2),
            KERNEL_SIZE=ks, BLOCK_CO=block_co, BLOCK_L=block_l, BLOCK_R=block_r,
            num_warps=4, num_stages=2,
        )
        return y
