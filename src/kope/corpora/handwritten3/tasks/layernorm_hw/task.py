"""Layer norm over the last two dimensions of a (N, H, W) tensor, no affine parameters."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
height = 24
width = 40


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, x.shape[-2:], eps=1e-5)


def get_inputs():
    return [torch.randn(batch_size, height, width) * 2.0 + 1.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 8, "height": 24, "width": 40},
        {"batch_size": 1, "height": 1, "width": 2},
        {"batch_size": 5, "height": 13, "width": 17},
        {"batch_size": 2, "height": 7, "width": 900},
    ]
