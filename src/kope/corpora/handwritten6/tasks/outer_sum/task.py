"""A batched outer sum: out[b, i, j] = a[b, i] + c[b, j]."""
import torch
import torch.nn as nn

batch = 4
m = 64
n = 160


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return a[:, :, None] + c[:, None, :]


def get_inputs():
    return [torch.randn(batch, m), torch.randn(batch, n) * 2.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "m": 64, "n": 160},
        {"batch": 1, "m": 1, "n": 1},
        {"batch": 3, "m": 37, "n": 53},
        {"batch": 2, "m": 9, "n": 700},
    ]
