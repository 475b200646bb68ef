"""Softshrink with its threshold lambd as an init argument: x - lambd above lambd, x + lambd below -lambd, else 0."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
dim = 512
lambd = 0.75


class Model(nn.Module):
    def __init__(self, lambd: float):
        super().__init__()
        self.lambd = lambd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softshrink(x, self.lambd)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0]


def get_init_inputs():
    return [lambd]


def get_cases():
    return [
        {"batch_size": 32, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 13, "dim": 777},
        {"batch_size": 2, "dim": 5000},
    ]
