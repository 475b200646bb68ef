"""Row-wise L2 normalisation: x / max(||x||_2, eps) over the last dimension."""
import torch
import torch.nn as nn

batch_size = 64
dim = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.normalize(x, p=2.0, dim=-1, eps=1e-12)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 1000},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 4097},
        {"batch_size": 65, "dim": 33},
    ]
