"""Binary cross-entropy with logits, mean reduction, soft targets in [0, 1]."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, targets)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0, torch.rand(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 13, "dim": 301},
        {"batch_size": 2, "dim": 9000},
    ]
