"""A sigmoid gate: x * sigmoid(y), float16 in and out; the gate's logits are large."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(y)


def get_inputs():
    x = torch.randn(batch_size, dim).half()
    y = (torch.randn(batch_size, dim) * 60.0).half()
    return [x, y]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 1333},
        {"batch_size": 3, "dim": 4100},
    ]
