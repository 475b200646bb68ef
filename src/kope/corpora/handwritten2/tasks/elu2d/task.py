"""ELU with alpha on a 2-D tensor: x if x > 0 else alpha * (exp(x) - 1)."""
import torch
import torch.nn as nn

rows = 32
cols = 256
alpha = 0.7


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(rows, cols) * 2.0]


def get_init_inputs():
    return [alpha]


def get_cases():
    return [
        {"rows": 32, "cols": 256},
        {"rows": 1, "cols": 1},
        {"rows": 45, "cols": 97},
        {"rows": 3, "cols": 1500},
    ]
