"""SoftMarginLoss (mean of log(1 + exp(-y * x))) with labels y in {-1, 1}."""

import torch
import torch.nn as nn

batch_size = 16
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.SoftMarginLoss()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.loss(x, y)


def get_inputs():
    x = torch.randn(batch_size, dim) * 3.0
    y = torch.randint(0, 2, (batch_size, dim)).float() * 2.0 - 1.0
    return [x, y]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 301},
        {"batch_size": 3, "dim": 2000},
    ]
