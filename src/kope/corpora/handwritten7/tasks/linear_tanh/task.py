"""tanh(nn.Linear(x)); the inputs are large, so many outputs saturate."""

import torch
import torch.nn as nn

batch_size = 16
in_features = 64
out_features = 48


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.fc(x))


def get_inputs():
    return [torch.randn(batch_size, in_features) * 40.0]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch_size": 16, "in_features": 64, "out_features": 48},
        {"batch_size": 1, "in_features": 1, "out_features": 1},
        {"batch_size": 7, "in_features": 45, "out_features": 37},
        {"batch_size": 5, "in_features": 200, "out_features": 90},
    ]
