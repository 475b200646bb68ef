"""The mean of x over the positions where a boolean mask is true, per row (0 for a row with no true position)."""
import torch
import torch.nn as nn

rows = 64
cols = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.to(x.dtype)
        return (x * m).sum(dim=1) / m.sum(dim=1).clamp_min(1.0)


def get_inputs():
    x = torch.randn(rows, cols) + 1.0
    mask = torch.rand(rows, cols) < 0.3
    mask[0] = False
    return [x, mask]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"rows": 64, "cols": 512},
        {"rows": 1, "cols": 1},
        {"rows": 10, "cols": 301},
        {"rows": 3, "cols": 2500},
    ]
