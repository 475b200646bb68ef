"""Sum of squares of each column of a float16 (M, N) tensor, returned in float32."""
import torch
import torch.nn as nn

m = 512
n = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() ** 2).sum(dim=0)


def get_inputs():
    return [(torch.randn(m, n) * 2.0).half()]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"m": 512, "n": 64},
        {"m": 1, "n": 1},
        {"m": 333, "n": 45},
        {"m": 4000, "n": 3},
    ]
