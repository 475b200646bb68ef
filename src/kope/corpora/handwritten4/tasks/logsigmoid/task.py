"""LogSigmoid on wide-range inputs (|x| up to a few hundred): log(1 / (1 + exp(-x)))."""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.logsigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 60.0]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 1024},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 7, "dim": 1333},
        {"batch_size": 2, "dim": 6000},
    ]
