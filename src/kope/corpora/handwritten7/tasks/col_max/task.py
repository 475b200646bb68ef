"""Column maximum: x.max(dim=0).values for (M, N); the values are mostly negative."""

import torch
import torch.nn as nn

M = 64
N = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.max(dim=0).values


def get_inputs():
    return [torch.randn(M, N) - 4.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 64, "N": 96},
        {"M": 1, "N": 1},
        {"M": 45, "N": 77},
        {"M": 300, "N": 20},
    ]
