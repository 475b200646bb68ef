import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mean(row_ptr, n_cols, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0)
    return tl.sum(acc, axis=0) / n_cols


@triton.jit
def _variance(row_ptr, n_cols, mean, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(row_ptr + cols, mask=mask, other=0.0)
        diff = tl.where(mask, x - mean, 0.0)
        acc += diff * diff
    return tl.sum(acc, axis=0) / n_cols


@triton.jit
def layer_norm_fwd(X, Y, W, B, stride_x, stride_y, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = X + row * stride_x
    y_row = Y + row * stride_y
    mean = _mean(x_row, n_cols, BLOCK)
    var = _variance(x_row, n_cols, mean, BLOCK)
    rstd = 1.0 / tl.sqrt(var + eps)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(W + cols, mask=mask, other=0.0)
        b = tl.load(B + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))
        self.eps = 1e-3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        y = torch.empty_like(x2)
        layer_norm_fwd[(x2.shape[0],)](
            x2, y, self.weight, self.bias, x2.stride(0), y.stride(0), shape[-1], self.eps, BLOCK=512,
        )
        return y.view(shape)
