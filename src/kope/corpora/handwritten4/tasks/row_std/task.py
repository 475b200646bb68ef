"""Unbiased standard deviation over the last dimension: x.std(dim=-1) (divides by N - 1)."""
import torch
import torch.nn as nn

rows = 32
cols = 1500


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.std(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols) * 2.0 + 3.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 32, "cols": 1500},
        {"rows": 1, "cols": 2},
        {"rows": 9, "cols": 77},
        {"rows": 3, "cols": 4100},
    ]
