"""Cumulative product over the last dimension (values near 1, so products stay finite)."""
import torch
import torch.nn as nn

batch_size = 16
length = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=-1)


def get_inputs():
    return [1.0 + (torch.rand(batch_size, length) - 0.5) * 0.02]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "length": 512},
        {"batch_size": 1, "length": 1},
        {"batch_size": 5, "length": 2500},
        {"batch_size": 40, "length": 31},
    ]
