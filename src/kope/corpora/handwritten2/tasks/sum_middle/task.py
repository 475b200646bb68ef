"""Sum of a 3-D tensor (B, M, N) over its middle dimension: (B, N)."""
import torch
import torch.nn as nn

batch = 4
m = 64
n = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(batch, m, n)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "m": 64, "n": 96},
        {"batch": 1, "m": 1, "n": 1},
        {"batch": 3, "m": 150, "n": 41},
        {"batch": 5, "m": 7, "n": 300},
    ]
