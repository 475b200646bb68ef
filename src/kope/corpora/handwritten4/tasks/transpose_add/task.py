"""x.transpose(1, 2) + y for 3-D tensors: x (B, M, N), y (B, N, M), out (B, N, M)."""
import torch
import torch.nn as nn

B = 4
M = 128
N = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2) + y


def get_inputs():
    return [torch.randn(B, M, N), torch.randn(B, N, M)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"B": 4, "M": 128, "N": 128},
        {"B": 1, "M": 1, "N": 1},
        {"B": 3, "M": 37, "N": 29},
        {"B": 2, "M": 300, "N": 40},
    ]
