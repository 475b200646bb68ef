"""GroupNorm over a (N, C, L) tensor with per-channel affine weight and bias (eps 1e-5)."""
import torch
import torch.nn as nn

batch_size = 4
channels = 16
length = 128
groups = 4


class Model(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.groups = groups
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.group_norm(x, self.groups, self.weight, self.bias, eps=1e-5)


def get_inputs():
    return [torch.randn(batch_size, channels, length) * 2.0 + 1.0]


def get_init_inputs():
    return [groups, channels]


def get_cases():
    return [
        {"batch_size": 4, "channels": 16, "length": 128, "groups": 4},
        {"batch_size": 1, "channels": 2, "length": 1, "groups": 1},
        {"batch_size": 3, "channels": 6, "length": 1001, "groups": 3},
        {"batch_size": 2, "channels": 32, "length": 17, "groups": 8},
    ]
