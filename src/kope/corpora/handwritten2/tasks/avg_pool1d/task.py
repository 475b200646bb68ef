"""AvgPool1d over (N, C, L) with kernel_size 3 and stride 2 (no padding)."""
import torch
import torch.nn as nn

batch_size = 4
channels = 8
length = 256
kernel_size = 3
stride = 2


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.avg_pool1d(x, self.kernel_size, self.stride)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride]


def get_cases():
    return [
        {"batch_size": 4, "channels": 8, "length": 256},
        {"batch_size": 1, "channels": 1, "length": 3},
        {"batch_size": 2, "channels": 3, "length": 1999},
        {"batch_size": 3, "channels": 17, "length": 12},
    ]
