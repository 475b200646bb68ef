"""Global max pooling over the last dimension: (B, C, L) -> (B, C); the inputs are mostly negative."""
import torch
import torch.nn as nn

batch = 8
channels = 16
length = 500


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=2)


def get_inputs():
    return [torch.randn(batch, channels, length) - 4.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 8, "channels": 16, "length": 500},
        {"batch": 1, "channels": 1, "length": 1},
        {"batch": 3, "channels": 7, "length": 129},
        {"batch": 2, "channels": 3, "length": 2100},
    ]
