"""Row-wise dot products of two float16 (B, N, D) tensors, accumulated and returned in float32: (B, N)."""
import torch
import torch.nn as nn

batch = 4
rows = 32
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x.float() * y.float()).sum(dim=-1)


def get_inputs():
    return [torch.randn(batch, rows, dim, dtype=torch.float16), torch.randn(batch, rows, dim, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "rows": 32, "dim": 256},
        {"batch": 1, "rows": 1, "dim": 1},
        {"batch": 3, "rows": 5, "dim": 1500},
        {"batch": 6, "rows": 50, "dim": 20},
    ]
