"""Hinge loss mean(clamp(1 - pred * target, min=0)) with targets in {-1, +1}: a scalar."""
import torch
import torch.nn as nn

batch_size = 64
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - pred * target, min=0))


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randint(0, 2, (batch_size, dim)).float() * 2 - 1]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 5, "dim": 1001},
        {"batch_size": 130, "dim": 7},
    ]
