"""Mean of squares of a whole tensor, a scalar (a global reduction)."""
import torch
import torch.nn as nn

batch_size = 64
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.pow(2).mean()


def get_inputs():
    return [torch.randn(batch_size, dim) + 0.5]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 33, "dim": 130},
        {"batch_size": 7, "dim": 4099},
    ]
