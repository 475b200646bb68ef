"""Fused bias add and tanh-approximated GELU: gelu(x + bias), bias of shape (cols,)."""
import torch
import torch.nn as nn

rows = 64
cols = 1000


class Model(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x + self.bias, approximate="tanh")


def get_inputs():
    return [torch.randn(rows, cols) * 2.0]


def get_init_inputs():
    return [cols]


def get_cases():
    return [
        {"rows": 64, "cols": 1000},
        {"rows": 1, "cols": 1},
        {"rows": 7, "cols": 4097},
        {"rows": 129, "cols": 33},
    ]
