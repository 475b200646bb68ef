"""Depthwise 1-D convolution (groups = channels), no padding, stride 1, no bias."""
import torch
import torch.nn as nn

batch_size = 4
channels = 16
length = 256
kernel_size = 5


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels, kernel_size]


def get_cases():
    return [
        {"batch_size": 4, "channels": 16, "length": 256, "kernel_size": 5},
        {"batch_size": 1, "channels": 1, "length": 1, "kernel_size": 1},
        {"batch_size": 3, "channels": 5, "length": 101, "kernel_size": 3},
        {"batch_size": 2, "channels": 3, "length": 3000, "kernel_size": 7},
    ]
