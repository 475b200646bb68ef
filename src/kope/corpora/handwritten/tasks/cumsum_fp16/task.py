"""Inclusive prefix sum of a float16 tensor over the last dimension, result in float16."""
import torch
import torch.nn as nn

batch = 16
length = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(batch, length, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 16, "length": 1024},
        {"batch": 1, "length": 1},
        {"batch": 5, "length": 3000},
    ]
