"""The L2 norm of each row, one value per row; the first row is all zeros (a padding row)."""
import torch
import torch.nn as nn

rows = 64
cols = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=2, dim=1)


def get_inputs():
    x = torch.randn(rows, cols)
    x[0] = 0.0
    return [x]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 64, "cols": 1024},
        {"rows": 1, "cols": 1},
        {"rows": 11, "cols": 999},
        {"rows": 3, "cols": 4000},
    ]
