"""A per-channel affine map on (B, C, L): x * w[c] + b[c], with w and b parameters."""
import torch
import torch.nn as nn

batch = 8
channels = 24
length = 256


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels) * 0.5 + 1.0)
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight[None, :, None] + self.bias[None, :, None]


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels]


def get_cases():
    return [
        {"batch": 8, "channels": 24, "length": 256},
        {"batch": 1, "channels": 1, "length": 1},
        {"batch": 3, "channels": 13, "length": 101},
        {"batch": 2, "channels": 5, "length": 1500},
    ]
