"""Mean over the last dimension of a (B, C, L) tensor: x.mean(dim=2), shape (B, C)."""
import torch
import torch.nn as nn

batch = 4
channels = 32
length = 384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=2)


def get_inputs():
    return [torch.randn(batch, channels, length) + 0.5]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "channels": 32, "length": 384},
        {"batch": 1, "channels": 1, "length": 1},
        {"batch": 3, "channels": 13, "length": 201},
        {"batch": 2, "channels": 6, "length": 2500},
    ]
