"""Sum over the first dimension of a (rows, cols) input: one value per column."""
import torch
import torch.nn as nn

rows = 200
cols = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=0)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 200, "cols": 96},
        {"rows": 1, "cols": 1},
        {"rows": 33, "cols": 130},
        {"rows": 517, "cols": 17},
    ]
