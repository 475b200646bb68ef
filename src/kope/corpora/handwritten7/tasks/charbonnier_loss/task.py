"""Charbonnier loss: mean(sqrt((x - y)^2 + eps^2)), eps an init argument; half of y equals x exactly."""

import torch
import torch.nn as nn

batch_size = 16
dim = 256
eps = 0.1


class Model(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sqrt((x - y) ** 2 + self.eps * self.eps).mean()


def get_inputs():
    x = torch.randn(batch_size, dim)
    keep = torch.rand(batch_size, dim) < 0.5
    y = torch.where(keep, x, x + torch.randn(batch_size, dim))
    return [x, y]


def get_init_inputs():
    return [eps]


def get_cases():
    return [
        {"batch_size": 16, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 301},
        {"batch_size": 3, "dim": 2000},
    ]
