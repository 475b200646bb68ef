"""Scale each row by its own factor: x * s[:, None], s a tensor input."""
import torch
import torch.nn as nn

rows = 128
cols = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return x * s[:, None]


def get_inputs():
    return [torch.randn(rows, cols), torch.rand(rows) * 4.0 - 2.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 128, "cols": 256},
        {"rows": 1, "cols": 1},
        {"rows": 45, "cols": 77},
        {"rows": 6, "cols": 1200},
    ]
