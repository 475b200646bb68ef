"""Softmax over the channel dimension of (B, C, L)."""

import torch
import torch.nn as nn

B = 4
C = 16
L = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(B, C, L) * 2.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"B": 4, "C": 16, "L": 64},
        {"B": 1, "C": 1, "L": 1},
        {"B": 3, "C": 11, "L": 37},
        {"B": 2, "C": 5, "L": 300},
    ]
