"""Batched matrix-vector product: y[b] = A[b] @ v[b] for A (B, M, K) and v (B, K)."""
import torch
import torch.nn as nn

batch_size = 4
m = 64
k = 200


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, v.unsqueeze(2)).squeeze(2)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4, "m": 64, "k": 200},
        {"batch_size": 1, "m": 1, "k": 1},
        {"batch_size": 3, "m": 37, "k": 77},
        {"batch_size": 2, "m": 5, "k": 2000},
    ]
