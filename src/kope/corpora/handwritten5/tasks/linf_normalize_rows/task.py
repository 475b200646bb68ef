"""Each row divided by its largest absolute value (F.normalize with p=inf along dim 1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, p=float("inf"), dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 11, "dim": 1333},
        {"batch_size": 3, "dim": 6000},
    ]
