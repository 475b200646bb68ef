"""Gated linear unit over the last dimension: a * sigmoid(b) where x = [a, b]."""
import torch
import torch.nn as nn

batch_size = 64
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.glu(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, 2 * dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 2049},
        {"batch_size": 129, "dim": 33},
    ]
