"""Smooth L1 (Huber-style) loss with beta, mean over all elements: a scalar."""
import torch
import torch.nn as nn

batch_size = 32
dim = 512
beta = 0.5


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.smooth_l1_loss(pred, target, reduction="mean", beta=self.beta)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim) * 0.5]


def get_init_inputs():
    return [beta]


def get_cases():
    return [
        {"batch_size": 32, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 9, "dim": 1111},
        {"batch_size": 100, "dim": 30},
    ]
