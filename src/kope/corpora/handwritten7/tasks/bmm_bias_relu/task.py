"""relu(A @ B + bias) for batched A (Bt, M, K), B (Bt, K, N) and bias (N,)."""

import torch
import torch.nn as nn

Bt = 3
M = 32
K = 32
N = 48


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.bmm(a, b) + bias)


def get_inputs():
    return [torch.randn(Bt, M, K), torch.randn(Bt, K, N), torch.randn(N)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"Bt": 3, "M": 32, "K": 32, "N": 48},
        {"Bt": 1, "M": 1, "K": 1, "N": 1},
        {"Bt": 2, "M": 19, "K": 45, "N": 27},
        {"Bt": 2, "M": 20, "K": 130, "N": 70},
    ]
