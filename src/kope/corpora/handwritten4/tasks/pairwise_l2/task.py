"""Row-wise Euclidean distance between x and y: ||x_i - y_i||_2 for each row, shape (N,)."""
import torch
import torch.nn as nn

N = 64
D = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sqrt(((x - y) ** 2).sum(dim=1))


def get_inputs():
    return [torch.randn(N, D), torch.randn(N, D) + 0.5]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"N": 64, "D": 1024},
        {"N": 1, "D": 1},
        {"N": 11, "D": 333},
        {"N": 3, "D": 5000},
    ]
