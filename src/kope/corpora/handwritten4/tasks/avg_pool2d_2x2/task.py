"""Average pooling of a (B, C, H, W) tensor with kernel 2 and stride 2 (odd sizes drop the last row/column)."""
import torch
import torch.nn as nn

batch = 2
channels = 8
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 2, "channels": 8, "height": 64, "width": 64},
        {"batch": 1, "channels": 1, "height": 2, "width": 2},
        {"batch": 3, "channels": 5, "height": 37, "width": 23},
        {"batch": 1, "channels": 2, "height": 20, "width": 300},
    ]
