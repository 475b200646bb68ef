"""Batched matmul with a transposed second operand: C[b] = A[b] @ B[b].T, B of shape (batch, N, K)."""
import torch
import torch.nn as nn

batch = 3
M = 48
N = 40
K = 72


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b.transpose(1, 2))


def get_inputs():
    return [torch.randn(batch, M, K), torch.randn(batch, N, K)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 3, "M": 48, "N": 40, "K": 72},
        {"batch": 1, "M": 1, "N": 1, "K": 1},
        {"batch": 2, "M": 33, "N": 17, "K": 130},
        {"batch": 4, "M": 20, "N": 65, "K": 9},
    ]
