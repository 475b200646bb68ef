"""torch.gather along dim 1 then a scale: out[i, j] = x[i, index[i, j]] * scale, index (N, K), K > D allowed."""
import torch
import torch.nn as nn

batch_size = 16
dim = 64
k = 96
scale = 0.5


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index) * self.scale


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randint(0, dim, (batch_size, k))]


def get_init_inputs():
    return [scale]


def get_cases():
    return [
        {"batch_size": 16, "dim": 64, "k": 96},
        {"batch_size": 1, "dim": 1, "k": 1},
        {"batch_size": 7, "dim": 29, "k": 53},
        {"batch_size": 3, "dim": 10, "k": 2000},
    ]
