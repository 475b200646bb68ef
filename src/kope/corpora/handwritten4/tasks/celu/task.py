"""CELU with alpha an init argument: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024
alpha = 1.7


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.celu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return [alpha]


def get_cases():
    return [
        {"batch_size": 16, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 1333},
        {"batch_size": 3, "dim": 5000},
    ]
