"""Matrix multiplication with a transposed right operand, C = A @ B.T, A (M, K) and B (N, K) row-major."""
import torch
import torch.nn as nn

M = 128
K = 96
N = 112


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 128, "K": 96, "N": 112},
        {"M": 1, "K": 1, "N": 1},
        {"M": 33, "K": 130, "N": 17},
        {"M": 100, "K": 7, "N": 129},
    ]
