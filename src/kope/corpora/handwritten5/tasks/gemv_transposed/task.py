"""A^T @ x for A of shape (M, N) and x of shape (M,): an (N,) vector."""
import torch
import torch.nn as nn

M = 512
N = 384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return A.t() @ x


def get_inputs():
    return [torch.randn(M, N), torch.randn(M)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 512, "N": 384},
        {"M": 1, "N": 1},
        {"M": 201, "N": 99},
        {"M": 3000, "N": 16},
    ]
