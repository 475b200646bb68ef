"""Negative log-likelihood loss (mean) of log-probabilities (N, C) and int64 targets (N,)."""
import torch
import torch.nn as nn

N = 256
C = 100


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_probs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.nll_loss(log_probs, target)


def get_inputs():
    return [torch.log_softmax(torch.randn(N, C) * 2.0, dim=1), torch.randint(0, C, (N,))]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"N": 256, "C": 100},
        {"N": 1, "C": 1},
        {"N": 77, "C": 13},
        {"N": 9, "C": 3000},
    ]
