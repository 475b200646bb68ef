"""F.threshold: x where x > threshold, else value; threshold and value are init arguments."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
dim = 512
threshold = 0.25
value = -2.0


class Model(nn.Module):
    def __init__(self, threshold: float, value: float):
        super().__init__()
        self.threshold = threshold
        self.value = value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.threshold(x, self.threshold, self.value)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [threshold, value]


def get_cases():
    return [
        {"batch_size": 16, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 333},
        {"batch_size": 3, "dim": 2100},
    ]
