"""Cumulative sum over the middle dimension L of a (B, L, D) tensor."""
import torch
import torch.nn as nn

batch_size = 4
length = 256
dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, length, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4, "length": 256, "dim": 64},
        {"batch_size": 1, "length": 1, "dim": 1},
        {"batch_size": 3, "length": 133, "dim": 45},
        {"batch_size": 2, "length": 1500, "dim": 3},
    ]
