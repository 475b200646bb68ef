"""Running minimum along each row: torch.cummin(x, dim=1).values."""

import torch
import torch.nn as nn

batch_size = 16
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cummin(x, dim=1).values


def get_inputs():
    return [torch.randn(batch_size, dim) + 1.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 5, "dim": 301},
        {"batch_size": 3, "dim": 800},
    ]
