"""Softmax over dim 1 (the channels) of a (N, C, L) tensor of large negative logits (log-probabilities far below 0)."""
import torch
import torch.nn as nn

batch_size = 4
channels = 48
length = 40


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, channels, length) * 5.0 - 120.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4, "channels": 48, "length": 40},
        {"batch_size": 1, "channels": 1, "length": 1},
        {"batch_size": 3, "channels": 23, "length": 57},
        {"batch_size": 2, "channels": 100, "length": 7},
    ]
