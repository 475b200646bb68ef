"""Mean squared error between two tensors, mean of (a - b)^2 over all elements (a 0-d result)."""
import torch
import torch.nn as nn

batch = 64
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.randn(batch, dim), torch.randn(batch, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 64, "dim": 1000},
        {"batch": 1, "dim": 1},
        {"batch": 33, "dim": 130},
        {"batch": 7, "dim": 4099},
    ]
