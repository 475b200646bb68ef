"""Population variance over the last dimension (unbiased=False)."""
import torch
import torch.nn as nn

batch_size = 64
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.var(x, dim=-1, unbiased=False)


def get_inputs():
    return [torch.randn(batch_size, dim) * 1.5 + 3.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 4097},
        {"batch_size": 65, "dim": 33},
    ]
