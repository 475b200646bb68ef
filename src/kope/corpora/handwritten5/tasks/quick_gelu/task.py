"""QuickGELU (as in CLIP): x * sigmoid(1.702 * x), float16 in and out."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)


def get_inputs():
    return [(torch.randn(batch_size, dim) * 3.0).half()]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 9, "dim": 1001},
        {"batch_size": 3, "dim": 4099},
    ]
