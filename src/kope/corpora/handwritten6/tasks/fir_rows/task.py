"""A valid 1-D FIR filter along each row (cross-correlation), the taps an nn.Parameter: (M, L) -> (M, L - K + 1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 32
length = 512
taps = 7


class Model(nn.Module):
    def __init__(self, taps: int):
        super().__init__()
        self.taps = nn.Parameter(torch.randn(taps) / taps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv1d(x[:, None, :], self.taps[None, None, :])[:, 0, :]


def get_inputs():
    return [torch.randn(rows, length)]


def get_init_inputs():
    return [taps]


def get_cases():
    return [
        {"rows": 32, "length": 512, "taps": 7},
        {"rows": 1, "length": 1, "taps": 1},
        {"rows": 5, "length": 301, "taps": 5},
        {"rows": 2, "length": 2100, "taps": 9},
    ]
