"""Population variance over dim 0 of an (M, N) float16 matrix with an offset mean (float16 out)."""
import torch
import torch.nn as nn

M = 512
N = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.var(x, dim=0, unbiased=False)


def get_inputs():
    return [(torch.randn(M, N) * 2.0 + 6.0).half()]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 512, "N": 256},
        {"M": 1, "N": 1},
        {"M": 333, "N": 97},
        {"M": 2000, "N": 20},
    ]
