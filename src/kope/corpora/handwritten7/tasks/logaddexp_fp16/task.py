"""torch.logaddexp(a, b) on float16 inputs with large magnitudes (up to a few hundred)."""

import torch
import torch.nn as nn

batch_size = 16
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.logaddexp(a, b)


def get_inputs():
    a = (torch.randn(batch_size, dim) * 60.0).half()
    b = (torch.randn(batch_size, dim) * 60.0).half()
    return [a, b]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 6, "dim": 203},
        {"batch_size": 2, "dim": 1300},
    ]
