"""RMS norm of a residual sum: rmsnorm(x + residual) * weight over the last dimension, eps 1e-6."""
import torch
import torch.nn as nn

batch_size = 32
hidden = 512


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, hidden))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        rms = torch.sqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return h / rms * self.weight


def get_inputs():
    return [torch.randn(batch_size, hidden), torch.randn(batch_size, hidden) * 0.5]


def get_init_inputs():
    return [hidden]


def get_cases():
    return [
        {"batch_size": 32, "hidden": 512},
        {"batch_size": 1, "hidden": 1},
        {"batch_size": 11, "hidden": 300},
        {"batch_size": 3, "hidden": 3000},
    ]
