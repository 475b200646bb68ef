"""Masked fill: x where the mask is False, a constant value where it is True (mask given as a bool tensor)."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024
value = -3.5


class Model(nn.Module):
    def __init__(self, value: float):
        super().__init__()
        self.value = value

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x.masked_fill(mask, self.value)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.rand(batch_size, dim) > 0.6]


def get_init_inputs():
    return [value]


def get_cases():
    return [
        {"batch_size": 16, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 1537},
        {"batch_size": 64, "dim": 19},
    ]
