"""A weighted mean squared error: mean(w * (x - y) ** 2), the weights a tensor input; a scalar."""
import torch
import torch.nn as nn

batch_size = 32
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.mean(w * (x - y) ** 2)


def get_inputs():
    x = torch.randn(batch_size, dim) * 10.0
    y = torch.randn(batch_size, dim)
    w = torch.rand(batch_size, dim) * 2.0
    return [x, y, w]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 999},
        {"batch_size": 2, "dim": 9000},
    ]
