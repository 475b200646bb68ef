"""Mish: x * tanh(softplus(x)) on a 2-D tensor with a wide range of values."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 64
cols = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(x)


def get_inputs():
    return [torch.randn(rows, cols) * 25.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 64, "cols": 512},
        {"rows": 1, "cols": 1},
        {"rows": 37, "cols": 203},
        {"rows": 5, "cols": 3000},
    ]
