"""Bias add: a (rows, cols) input plus a learned (cols,) bias broadcast over the rows."""
import torch
import torch.nn as nn

rows = 64
cols = 1000


class Model(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.bias


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [cols]


def get_cases():
    return [
        {"rows": 64, "cols": 1000},
        {"rows": 1, "cols": 1},
        {"rows": 7, "cols": 4097},
        {"rows": 129, "cols": 33},
    ]
