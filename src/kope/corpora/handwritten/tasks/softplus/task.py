"""Softplus with beta and threshold: log(1 + exp(beta * x)) / beta, linear above the threshold."""
import torch
import torch.nn as nn

batch_size = 64
dim = 1000
beta = 2.0
threshold = 10.0


class Model(nn.Module):
    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(batch_size, dim) * 4.0]


def get_init_inputs():
    return [beta, threshold]


def get_cases():
    return [
        {"batch_size": 64, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 4097},
        {"batch_size": 129, "dim": 333},
    ]
