"""RMSNorm over the last dimension with a weight: x * rsqrt(mean(x^2) + eps) * weight (eps 1e-6)."""
import torch
import torch.nn as nn

batch = 4
seq = 16
dim = 1000


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim]


def get_cases():
    return [
        {"batch": 4, "seq": 16, "dim": 1000},
        {"batch": 1, "seq": 1, "dim": 1},
        {"batch": 3, "seq": 7, "dim": 130},
        {"batch": 2, "seq": 5, "dim": 5000},
    ]
