"""Divide a tensor by its Frobenius norm (over all elements)."""
import torch
import torch.nn as nn

batch_size = 16
features = 64
dim = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.randn(batch_size, features, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "features": 64, "dim": 32},
        {"batch_size": 1, "features": 1, "dim": 1},
        {"batch_size": 3, "features": 77, "dim": 101},
        {"batch_size": 40, "features": 5, "dim": 9},
    ]
