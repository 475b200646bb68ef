"""Clamp each row of x between its own lower and upper bound, given as (M,) tensors."""
import torch
import torch.nn as nn

M = 128
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=lo[:, None], max=hi[:, None])


def get_inputs():
    return [torch.randn(M, N) * 2.0, -torch.rand(M), torch.rand(M)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 128, "N": 512},
        {"M": 1, "N": 1},
        {"M": 37, "N": 301},
        {"M": 3, "N": 5000},
    ]
