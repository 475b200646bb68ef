"""Exponential moving average along rows: y[0] = x[0], y[t] = (1 - alpha) * y[t-1] + alpha * x[t]."""

import torch
import torch.nn as nn

batch_size = 8
dim = 128
alpha = 0.3


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        y = x[:, 0]
        out[:, 0] = y
        for t in range(1, x.shape[1]):
            y = (1.0 - self.alpha) * y + self.alpha * x[:, t]
            out[:, t] = y
        return out


def get_inputs():
    return [torch.randn(batch_size, dim) + 2.0]


def get_init_inputs():
    return [alpha]


def get_cases():
    return [
        {"batch_size": 8, "dim": 128},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 5, "dim": 203},
        {"batch_size": 2, "dim": 600},
    ]
