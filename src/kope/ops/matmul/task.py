"""Matrix multiplication C = A @ B in float16, A of shape (M, K) and B of shape (K, N)."""
import torch
import torch.nn as nn

M = 128
K = 96
N = 112


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 128, "K": 96, "N": 112},
        {"M": 1, "K": 1, "N": 1},
        {"M": 33, "K": 130, "N": 17},
        {"M": 100, "K": 7, "N": 129},
    ]
