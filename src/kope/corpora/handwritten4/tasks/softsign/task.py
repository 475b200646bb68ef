"""Softsign x / (1 + |x|) on a float16 (B, C, L) tensor."""
import torch
import torch.nn as nn

batch = 4
channels = 16
length = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softsign(x)


def get_inputs():
    return [(torch.randn(batch, channels, length) * 4.0).half()]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "channels": 16, "length": 256},
        {"batch": 1, "channels": 1, "length": 1},
        {"batch": 3, "channels": 7, "length": 333},
        {"batch": 2, "channels": 5, "length": 2100},
    ]
