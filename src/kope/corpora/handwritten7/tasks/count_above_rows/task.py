"""Per-row count of elements above a threshold (an init argument, negative): (x > t).sum(dim=1), int64."""

import torch
import torch.nn as nn

batch_size = 32
dim = 256
threshold = -0.5


class Model(nn.Module):
    def __init__(self, threshold: float):
        super().__init__()
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x > self.threshold).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [threshold]


def get_cases():
    return [
        {"batch_size": 32, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 9, "dim": 211},
        {"batch_size": 3, "dim": 900},
    ]
