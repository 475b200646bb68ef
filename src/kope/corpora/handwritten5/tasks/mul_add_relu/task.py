"""relu(x * y + z), elementwise over three float16 tensors with wide-range values (products up to a few hundred)."""
import torch
import torch.nn as nn

batch_size = 32
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * y + z)


def get_inputs():
    return [
        (torch.randn(batch_size, dim) * 8.0).half(),
        (torch.randn(batch_size, dim) * 8.0).half(),
        (torch.randn(batch_size, dim) * 64.0).half(),
    ]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 999},
        {"batch_size": 2, "dim": 9000},
    ]
