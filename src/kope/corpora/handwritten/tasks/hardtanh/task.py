"""Hardtanh (clamp) with asymmetric bounds given to the constructor."""
import torch
import torch.nn as nn

batch_size = 64
dim = 1000
min_val = -0.5
max_val = 1.5


class Model(nn.Module):
    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(x, self.min_val, self.max_val)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0]


def get_init_inputs():
    return [min_val, max_val]


def get_cases():
    return [
        {"batch_size": 64, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 4097},
        {"batch_size": 129, "dim": 333},
    ]
