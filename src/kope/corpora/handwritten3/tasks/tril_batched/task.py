"""Lower triangle of each matrix of a (B, M, N) batch, with the diagonal offset an init argument."""
import torch
import torch.nn as nn

batch_size = 4
m = 48
n = 64
diagonal = -1


class Model(nn.Module):
    def __init__(self, diagonal: int):
        super().__init__()
        self.diagonal = diagonal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tril(x, diagonal=self.diagonal)


def get_inputs():
    return [torch.randn(batch_size, m, n)]


def get_init_inputs():
    return [diagonal]


def get_cases():
    return [
        {"batch_size": 4, "m": 48, "n": 64},
        {"batch_size": 1, "m": 1, "n": 1},
        {"batch_size": 3, "m": 37, "n": 29},
        {"batch_size": 2, "m": 5, "n": 700},
    ]
