"""Inclusive cumulative sum along the last dimension of (B, M, N)."""

import torch
import torch.nn as nn

B = 4
M = 8
N = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=2)


def get_inputs():
    return [torch.randn(B, M, N) + 0.5]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"B": 4, "M": 8, "N": 128},
        {"B": 1, "M": 1, "N": 1},
        {"B": 3, "M": 5, "N": 157},
        {"B": 2, "M": 3, "N": 700},
    ]
