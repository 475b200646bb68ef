"""Per-channel scale and shift over the last dimension, x * gamma + beta, gamma and beta nn.Parameters."""

import torch
import torch.nn as nn

batch_size = 32
dim = 32


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.gamma = nn.Parameter(torch.randn(dim) * 0.5 + 1.0)
        self.beta = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma + self.beta


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]


def get_cases():
    return [
        {"batch_size": 32, "dim": 32},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 13, "dim": 45},
        {"batch_size": 4, "dim": 500},
    ]
