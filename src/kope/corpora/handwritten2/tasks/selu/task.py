"""SELU: scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with the standard constants."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 5, "dim": 2049},
        {"batch_size": 40, "dim": 77},
    ]
