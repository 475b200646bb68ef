"""Hardswish: x * relu6(x + 3) / 6, elementwise on a 2-D tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
dim = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 4.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 2048},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 9, "dim": 1111},
        {"batch_size": 3, "dim": 5000},
    ]
