"""The unbiased standard deviation over the middle dimension of (B, L, D) -> (B, D), float16 in and out."""
import torch
import torch.nn as nn

batch = 4
length = 256
d = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.std(x, dim=1, unbiased=True)


def get_inputs():
    return [(torch.randn(batch, length, d) * 2.0 + 50.0).half()]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 4, "length": 256, "d": 64},
        {"batch": 1, "length": 2, "d": 1},
        {"batch": 3, "length": 77, "d": 37},
        {"batch": 2, "length": 1500, "d": 5},
    ]
