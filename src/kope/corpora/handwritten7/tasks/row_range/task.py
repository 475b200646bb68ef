"""Per-row range: max(x, dim=1) - min(x, dim=1); the values are mostly positive."""

import torch
import torch.nn as nn

batch_size = 32
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.max(dim=1).values - x.min(dim=1).values


def get_inputs():
    return [torch.randn(batch_size, dim) + 4.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 9, "dim": 217},
        {"batch_size": 4, "dim": 900},
    ]
