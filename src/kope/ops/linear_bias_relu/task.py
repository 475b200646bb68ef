"""Fused linear layer, bias and ReLU: relu(x @ W.T + b) with an nn.Linear."""
import torch
import torch.nn as nn

batch = 64
in_features = 128
out_features = 96


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch": 64, "in_features": 128, "out_features": 96},
        {"batch": 1, "in_features": 1, "out_features": 1},
        {"batch": 33, "in_features": 130, "out_features": 17},
        {"batch": 100, "in_features": 7, "out_features": 129},
    ]
