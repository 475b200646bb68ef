"""Reverse cumulative sum over the last dimension: out[i, j] = sum of x[i, j:]."""
import torch
import torch.nn as nn

batch_size = 16
length = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "length": 512},
        {"batch_size": 1, "length": 1},
        {"batch_size": 9, "length": 1000},
        {"batch_size": 50, "length": 20},
    ]
