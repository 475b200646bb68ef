"""Row-wise L1 normalisation: x / max(sum(|x|), eps) over the last dimension."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
dim = 1500


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, p=1.0, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 1500},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 333},
        {"batch_size": 3, "dim": 6000},
    ]
