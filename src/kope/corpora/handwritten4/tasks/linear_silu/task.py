"""nn.Linear followed by SiLU: silu(x @ W^T + b)."""
import torch
import torch.nn as nn

batch_size = 64
in_features = 256
out_features = 256


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch_size": 64, "in_features": 256, "out_features": 256},
        {"batch_size": 1, "in_features": 1, "out_features": 1},
        {"batch_size": 19, "in_features": 75, "out_features": 83},
        {"batch_size": 8, "in_features": 300, "out_features": 520},
    ]
