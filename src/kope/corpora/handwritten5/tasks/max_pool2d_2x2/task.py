"""2x2 max pooling with stride 2 (floor mode) on a (B, C, H, W) tensor of mostly negative values."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
channels = 8
height = 32
width = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, kernel_size=2, stride=2)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) - 1.5]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 4, "channels": 8, "height": 32, "width": 32},
        {"batch_size": 1, "channels": 1, "height": 2, "width": 2},
        {"batch_size": 3, "channels": 5, "height": 19, "width": 27},
        {"batch_size": 1, "channels": 2, "height": 6, "width": 400},
    ]
