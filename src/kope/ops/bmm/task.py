"""Batched matrix multiplication C[i] = A[i] @ B[i] in float16, A (batch, M, K) and B (batch, K, N)."""
import torch
import torch.nn as nn

batch = 4
M = 64
K = 96
N = 80


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch, M, K, dtype=torch.float16), torch.randn(batch, K, N, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "M": 64, "K": 96, "N": 80},
        {"batch": 1, "M": 1, "K": 1, "N": 1},
        {"batch": 3, "M": 33, "K": 130, "N": 17},
        {"batch": 2, "M": 100, "K": 5, "N": 129},
    ]
