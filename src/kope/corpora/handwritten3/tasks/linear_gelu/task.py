"""A linear layer followed by the exact (erf) GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_features = 96
out_features = 80


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch_size": 64, "in_features": 96, "out_features": 80},
        {"batch_size": 1, "in_features": 1, "out_features": 1},
        {"batch_size": 19, "in_features": 45, "out_features": 33},
        {"batch_size": 3, "in_features": 300, "out_features": 200},
    ]
