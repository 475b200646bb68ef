"""torch.addcmul(x, y, z, value=value) with z of shape (C, 1) broadcast over a (B, C, L) tensor."""
import torch
import torch.nn as nn

batch = 4
channels = 16
length = 256
value = 0.75


class Model(nn.Module):
    def __init__(self, value: float):
        super().__init__()
        self.value = value

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(x, y, z, value=self.value)


def get_inputs():
    return [
        torch.randn(batch, channels, length),
        torch.randn(batch, channels, length),
        torch.randn(channels, 1),
    ]


def get_init_inputs():
    return [value]


def get_cases():
    return [
        {"batch": 4, "channels": 16, "length": 256},
        {"batch": 1, "channels": 1, "length": 1},
        {"batch": 3, "channels": 7, "length": 111},
        {"batch": 2, "channels": 3, "length": 3001},
    ]
