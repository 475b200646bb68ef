"""Huber loss with delta an init argument, mean reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
dim = 1024
delta = 0.7


class Model(nn.Module):
    def __init__(self, delta: float):
        super().__init__()
        self.delta = delta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.huber_loss(predictions, targets, delta=self.delta)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [delta]


def get_cases():
    return [
        {"batch_size": 32, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 9, "dim": 777},
        {"batch_size": 2, "dim": 20000},
    ]
