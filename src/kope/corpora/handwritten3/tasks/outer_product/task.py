"""Batched outer product: out[b, i, j] = a[b, i] * c[b, j]."""
import torch
import torch.nn as nn

batch_size = 4
m = 96
n = 80


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return a.unsqueeze(2) * c.unsqueeze(1)


def get_inputs():
    return [torch.randn(batch_size, m), torch.randn(batch_size, n)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4, "m": 96, "n": 80},
        {"batch_size": 1, "m": 1, "n": 1},
        {"batch_size": 3, "m": 45, "n": 71},
        {"batch_size": 2, "m": 3, "n": 1000},
    ]
