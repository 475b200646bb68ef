"""a * tanh(x) + b on a (B, C, L) tensor, with a per-channel scale a and shift b (nn.Parameters of shape (C,))."""
import torch
import torch.nn as nn

batch_size = 4
channels = 32
length = 256


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.a = nn.Parameter(torch.rand(channels) * 2.0 + 0.5)
        self.b = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a[None, :, None] * torch.tanh(x) + self.b[None, :, None]


def get_inputs():
    return [torch.randn(batch_size, channels, length) * 2.0]


def get_init_inputs():
    return [channels]


def get_cases():
    return [
        {"batch_size": 4, "channels": 32, "length": 256},
        {"batch_size": 1, "channels": 1, "length": 1},
        {"batch_size": 3, "channels": 19, "length": 141},
        {"batch_size": 2, "channels": 5, "length": 1500},
    ]
