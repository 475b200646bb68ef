"""1-D convolution with bias (nn.Conv1d), stride 1, no padding, input (batch, in_channels, length)."""
import torch
import torch.nn as nn

batch = 8
in_channels = 16
out_channels = 32
length = 128
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_cases():
    return [
        {"batch": 8, "in_channels": 16, "out_channels": 32, "length": 128, "kernel_size": 3},
        {"batch": 1, "in_channels": 1, "out_channels": 1, "length": 1, "kernel_size": 1},
        {"batch": 3, "in_channels": 5, "out_channels": 17, "length": 1000, "kernel_size": 7},
        {"batch": 2, "in_channels": 33, "out_channels": 9, "length": 20, "kernel_size": 20},
    ]
