"""Fused linear layer then scale: (x @ W^T + b) * scale, W of shape (out_features, in_features)."""
import torch
import torch.nn as nn

batch_size = 64
in_features = 96
out_features = 80
scale = 0.5


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.1)
        self.bias = nn.Parameter(torch.randn(out_features))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ self.weight.t() + self.bias) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]


def get_cases():
    return [
        {"batch_size": 64, "in_features": 96, "out_features": 80},
        {"batch_size": 1, "in_features": 1, "out_features": 1},
        {"batch_size": 37, "in_features": 130, "out_features": 50},
        {"batch_size": 20, "in_features": 17, "out_features": 150},
    ]
