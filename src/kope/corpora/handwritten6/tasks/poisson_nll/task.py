"""Poisson negative log-likelihood with log inputs, mean reduction: mean(exp(input) - target * input)."""
import torch
import torch.nn as nn

batch_size = 32
dim = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.PoissonNLLLoss(log_input=True, full=False, reduction="mean")

    def forward(self, log_rate: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return self.loss(log_rate, target)


def get_inputs():
    log_rate = torch.randn(batch_size, dim) * 0.5
    target = torch.poisson(torch.rand(batch_size, dim) * 4.0)
    return [log_rate, target]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 5, "dim": 1111},
        {"batch_size": 2, "dim": 7000},
    ]
