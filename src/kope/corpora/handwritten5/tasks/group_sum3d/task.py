"""(B, C, L) summed over consecutive groups of channels: out[b, g, l] = sum of x[b, g*C/G : (g+1)*C/G, l]."""
import torch
import torch.nn as nn

batch_size = 4
channels = 64
length = 256
groups = 8


class Model(nn.Module):
    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, l = x.shape
        return x.reshape(b, self.groups, c // self.groups, l).sum(dim=2)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [groups]


def get_cases():
    return [
        {"batch_size": 4, "channels": 64, "length": 256, "groups": 8},
        {"batch_size": 1, "channels": 1, "length": 1, "groups": 1},
        {"batch_size": 3, "channels": 21, "length": 133, "groups": 3},
        {"batch_size": 2, "channels": 12, "length": 1500, "groups": 2},
    ]
