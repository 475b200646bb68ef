"""A^T @ B with A stored (K, M) and B stored (K, N): an (M, N) product."""
import torch
import torch.nn as nn

M = 128
N = 96
K = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A.t() @ B


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 128, "N": 96, "K": 256},
        {"M": 1, "N": 1, "K": 1},
        {"M": 45, "N": 71, "K": 99},
        {"M": 16, "N": 24, "K": 1000},
    ]
