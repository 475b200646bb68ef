"""2-D transpose materialised: y = x.T, contiguous, x of shape (M, N)."""
import torch
import torch.nn as nn

M = 64
N = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(0, 1).contiguous()


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 64, "N": 96},
        {"M": 1, "N": 1},
        {"M": 33, "N": 130},
        {"M": 129, "N": 17},
    ]
