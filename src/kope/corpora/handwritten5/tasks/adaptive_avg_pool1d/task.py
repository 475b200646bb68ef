"""Adaptive average pooling of a (B, C, L) tensor to a fixed output length (windows [floor(iL/O), ceil((i+1)L/O)))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
channels = 8
length = 256
output_size = 10


class Model(nn.Module):
    def __init__(self, output_size: int):
        super().__init__()
        self.output_size = output_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool1d(x, self.output_size)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [output_size]


def get_cases():
    return [
        {"batch_size": 2, "channels": 8, "length": 256, "output_size": 10},
        {"batch_size": 1, "channels": 1, "length": 1, "output_size": 1},
        {"batch_size": 3, "channels": 7, "length": 101, "output_size": 9},
        {"batch_size": 2, "channels": 3, "length": 3000, "output_size": 7},
    ]
