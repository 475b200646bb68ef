"""Mean over the middle dimension of (B, M, N), float16; values between 90 and 150 (a level per batch and
column), so sums of a few hundred pass float16's range."""

import torch
import torch.nn as nn

B = 2
M = 640
N = 40


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


def get_inputs():
    return [(torch.randn(B, M, N) * 5.0 + 90.0 + torch.rand(B, 1, N) * 60.0).half()]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"B": 2, "M": 640, "N": 40},
        {"B": 1, "M": 1, "N": 1},
        {"B": 3, "M": 577, "N": 37},
        {"B": 2, "M": 1100, "N": 70},
    ]
