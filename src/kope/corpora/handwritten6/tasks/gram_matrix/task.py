"""A batched Gram matrix: X @ X^T for X of shape (B, N, D) -> (B, N, N)."""
import torch
import torch.nn as nn

batch = 4
n = 64
d = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bmm(x, x.transpose(1, 2))


def get_inputs():
    return [torch.randn(batch, n, d)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "n": 64, "d": 128},
        {"batch": 1, "n": 1, "d": 1},
        {"batch": 3, "n": 29, "d": 45},
        {"batch": 2, "n": 17, "d": 300},
    ]
