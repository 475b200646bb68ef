"""Clamp to a fixed interval given as init arguments: torch.clamp(x, min_val, max_val)."""
import torch
import torch.nn as nn

rows = 64
cols = 256
min_val = -0.5
max_val = 0.8


class Model(nn.Module):
    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, self.min_val, self.max_val)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [min_val, max_val]


def get_cases():
    return [
        {"rows": 64, "cols": 256},
        {"rows": 1, "cols": 1},
        {"rows": 37, "cols": 203},
        {"rows": 5, "cols": 1500},
    ]
