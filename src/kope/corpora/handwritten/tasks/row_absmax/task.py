"""Largest magnitude per row: max(|x|) over the last dimension."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x.abs(), dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 3, "dim": 4097},
        {"batch_size": 9, "dim": 33},
    ]
