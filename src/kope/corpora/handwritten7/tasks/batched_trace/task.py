"""Trace of each matrix of a batch (B, N, N) -> (B,)."""

import torch
import torch.nn as nn

B = 8
N = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.diagonal(x, dim1=1, dim2=2).sum(dim=1)


def get_inputs():
    return [torch.randn(B, N, N) + 0.5]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"B": 8, "N": 64},
        {"B": 1, "N": 1},
        {"B": 5, "N": 45},
        {"B": 2, "N": 300},
    ]
