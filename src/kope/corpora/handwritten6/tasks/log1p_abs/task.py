"""Signed log compression: log1p(|x|) * sign(x); a share of the inputs are exact zeros."""
import torch
import torch.nn as nn

batch_size = 32
dim = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log1p(torch.abs(x)) * torch.sign(x)


def get_inputs():
    x = torch.randn(batch_size, dim) * 4.0
    x = torch.where(x.abs() < 0.5, torch.zeros_like(x), x)
    return [x]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 9, "dim": 1001},
        {"batch_size": 2, "dim": 5000},
    ]
