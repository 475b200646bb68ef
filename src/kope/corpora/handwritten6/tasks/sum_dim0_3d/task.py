"""Sum a (B, M, N) tensor over its first dimension: x.sum(dim=0) -> (M, N)."""
import torch
import torch.nn as nn

batch = 16
m = 64
n = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=0)


def get_inputs():
    return [torch.randn(batch, m, n)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 16, "m": 64, "n": 96},
        {"batch": 1, "m": 1, "n": 1},
        {"batch": 7, "m": 19, "n": 45},
        {"batch": 37, "m": 5, "n": 300},
    ]
