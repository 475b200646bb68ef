"""A scaled hard sigmoid: alpha * hardsigmoid(x), alpha an init argument."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
dim = 2048
alpha = 1.5


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardsigmoid(x) * self.alpha


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return [alpha]


def get_cases():
    return [
        {"batch_size": 16, "dim": 2048},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 1234},
        {"batch_size": 2, "dim": 10000},
    ]
