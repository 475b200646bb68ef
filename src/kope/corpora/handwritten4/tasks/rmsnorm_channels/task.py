"""RMS norm of a (B, C, L) tensor over the channel dimension, with a per-channel weight:
x / sqrt(mean(x^2 over C) + eps) * weight[c]."""
import torch
import torch.nn as nn

batch = 4
channels = 48
length = 256
eps = 1e-3


class Model(nn.Module):
    def __init__(self, channels: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(channels) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(x.pow(2).mean(dim=1, keepdim=True) + self.eps)
        return x / rms * self.weight[None, :, None]


def get_inputs():
    return [torch.randn(batch, channels, length) * 0.5]


def get_init_inputs():
    return [channels, eps]


def get_cases():
    return [
        {"batch": 4, "channels": 48, "length": 256},
        {"batch": 1, "channels": 1, "length": 1},
        {"batch": 3, "channels": 13, "length": 101},
        {"batch": 2, "channels": 7, "length": 1500},
    ]
