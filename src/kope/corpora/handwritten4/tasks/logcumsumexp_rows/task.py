"""torch.logcumsumexp over the last dimension of a 2-D tensor."""
import torch
import torch.nn as nn

rows = 16
cols = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logcumsumexp(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols) * 2.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 16, "cols": 1000},
        {"rows": 1, "cols": 1},
        {"rows": 7, "cols": 333},
        {"rows": 2, "cols": 3000},
    ]
