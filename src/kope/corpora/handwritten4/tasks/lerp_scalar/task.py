"""torch.lerp(a, b, weight) with a scalar weight (an init argument), float16 inputs."""
import torch
import torch.nn as nn

batch_size = 32
dim = 512
weight = 0.3


class Model(nn.Module):
    def __init__(self, weight: float):
        super().__init__()
        self.weight = weight

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.lerp(a, b, self.weight)


def get_inputs():
    return [torch.randn(batch_size, dim).half(), (torch.randn(batch_size, dim) * 2.0 + 1.0).half()]


def get_init_inputs():
    return [weight]


def get_cases():
    return [
        {"batch_size": 32, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 1333},
        {"batch_size": 2, "dim": 7000},
    ]
