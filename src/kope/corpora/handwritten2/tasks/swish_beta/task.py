"""Swish with a learnable beta: x * sigmoid(beta * x), beta a scalar parameter."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024
beta = 1.7


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = nn.Parameter(torch.tensor(beta))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.beta * x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return [beta]


def get_cases():
    return [
        {"batch_size": 16, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 1333},
        {"batch_size": 33, "dim": 65},
    ]
