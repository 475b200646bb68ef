"""Add a transposed view: x + y.T with x of shape (M, N) and y of shape (N, M), no copy of y."""
import torch
import torch.nn as nn

M = 64
N = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y.t()


def get_inputs():
    return [torch.randn(M, N), torch.randn(N, M)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 64, "N": 96},
        {"M": 1, "N": 1},
        {"M": 33, "N": 130},
        {"M": 129, "N": 17},
    ]
