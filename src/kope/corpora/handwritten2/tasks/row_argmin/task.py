"""Index of the minimum of each row (positive values), int64."""
import torch
import torch.nn as nn

batch_size = 32
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=1)


def get_inputs():
    return [torch.rand(batch_size, dim) + 0.25]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 6, "dim": 4099},
        {"batch_size": 70, "dim": 33},
    ]
