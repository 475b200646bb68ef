"""PReLU with one learnable slope per channel on a (N, C, L) tensor."""
import torch
import torch.nn as nn

batch_size = 8
channels = 16
length = 512


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.05, 0.8, channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight.view(1, -1, 1)
        return torch.where(x >= 0, x, w * x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]


def get_cases():
    return [
        {"batch_size": 8, "channels": 16, "length": 512},
        {"batch_size": 1, "channels": 1, "length": 1},
        {"batch_size": 3, "channels": 7, "length": 333},
        {"batch_size": 2, "channels": 5, "length": 4000},
    ]
