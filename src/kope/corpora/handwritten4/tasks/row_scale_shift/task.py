"""x * d[None, :] + e[:, None] with parameters d (D,) and e (M,)."""
import torch
import torch.nn as nn

M = 128
D = 256


class Model(nn.Module):
    def __init__(self, M: int, D: int):
        super().__init__()
        self.d = nn.Parameter(torch.randn(D))
        self.e = nn.Parameter(torch.randn(M))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.d[None, :] + self.e[:, None]


def get_inputs():
    return [torch.randn(M, D)]


def get_init_inputs():
    return [M, D]


def get_cases():
    return [
        {"M": 128, "D": 256},
        {"M": 1, "D": 1},
        {"M": 37, "D": 91},
        {"M": 5, "D": 3000},
    ]
