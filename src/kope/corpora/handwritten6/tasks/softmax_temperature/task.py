"""Softmax with a temperature: softmax(x / T, dim=-1), T an init argument; the logits are large."""
import torch
import torch.nn as nn

rows = 64
cols = 512
temperature = 0.5


class Model(nn.Module):
    def __init__(self, temperature: float):
        super().__init__()
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x / self.temperature, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols) * 30.0]


def get_init_inputs():
    return [temperature]


def get_cases():
    return [
        {"rows": 64, "cols": 512},
        {"rows": 1, "cols": 1},
        {"rows": 13, "cols": 300},
        {"rows": 3, "cols": 3000},
    ]
