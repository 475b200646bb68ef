"""Argmax over dim 0 (down the columns) of a 2-D tensor."""
import torch
import torch.nn as nn

m = 200
n = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=0)


def get_inputs():
    return [torch.randn(m, n)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"m": 200, "n": 96},
        {"m": 1, "n": 1},
        {"m": 77, "n": 45},
        {"m": 1000, "n": 3},
    ]
