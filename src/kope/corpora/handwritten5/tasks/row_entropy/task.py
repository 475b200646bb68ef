"""Entropy of the softmax of each row: -sum(softmax(x) * log_softmax(x)) over dim 1. Wide-range logits."""
import torch
import torch.nn as nn

batch_size = 64
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return -(torch.softmax(x, dim=1) * torch.log_softmax(x, dim=1)).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim) * 30.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 17, "dim": 1111},
        {"batch_size": 3, "dim": 5000},
    ]
