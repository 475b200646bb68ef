"""Row-wise logsumexp of large-magnitude logits (values up to a few hundred)."""
import torch
import torch.nn as nn

batch_size = 32
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim) * 40.0 - 20.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 3001},
        {"batch_size": 100, "dim": 50},
    ]
