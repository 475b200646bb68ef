"""log_softmax over dim 0 of an (M, N) matrix: each column is normalised over its rows. Wide-range logits."""
import torch
import torch.nn as nn

M = 256
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=0)


def get_inputs():
    return [torch.randn(M, N) * 40.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"M": 256, "N": 512},
        {"M": 1, "N": 1},
        {"M": 77, "N": 301},
        {"M": 1100, "N": 24},
    ]
