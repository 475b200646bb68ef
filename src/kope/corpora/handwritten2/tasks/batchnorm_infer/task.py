"""BatchNorm1d in inference mode over (N, C, L): running statistics and affine parameters per channel, eps 1e-3."""
import torch
import torch.nn as nn

batch_size = 8
channels = 24
length = 100


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))
        self.register_buffer("running_mean", torch.randn(channels))
        self.register_buffer("running_var", torch.rand(channels) * 0.05 + 0.001)
        self.eps = 1e-3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.batch_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias, training=False, eps=self.eps
        )


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]


def get_cases():
    return [
        {"batch_size": 8, "channels": 24, "length": 100},
        {"batch_size": 1, "channels": 1, "length": 1},
        {"batch_size": 3, "channels": 5, "length": 777},
        {"batch_size": 2, "channels": 70, "length": 9},
    ]
