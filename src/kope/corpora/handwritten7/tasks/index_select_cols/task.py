"""x[:, idx]: columns of x gathered by an int64 index (repeats allowed)."""

import torch
import torch.nn as nn

M = 32
N = 80
K = 48


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return x[:, idx]


def get_inputs():
    return [torch.randn(M, N), torch.randint(0, N, (K,))]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 32, "N": 80, "K": 48},
        {"M": 1, "N": 1, "K": 1},
        {"M": 19, "N": 53, "K": 37},
        {"M": 8, "N": 300, "K": 200},
    ]
