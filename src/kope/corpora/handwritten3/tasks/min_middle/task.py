"""Minimum over the middle dimension of a (B, M, K) tensor of positive values."""
import torch
import torch.nn as nn

batch_size = 4
m = 100
k = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=1).values


def get_inputs():
    return [torch.rand(batch_size, m, k) + 0.25]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4, "m": 100, "k": 64},
        {"batch_size": 1, "m": 1, "k": 1},
        {"batch_size": 3, "m": 45, "k": 29},
        {"batch_size": 2, "m": 300, "k": 5},
    ]
