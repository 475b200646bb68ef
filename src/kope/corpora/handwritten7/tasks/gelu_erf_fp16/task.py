"""Exact (erf) GELU, float16 in and out."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [(torch.randn(batch_size, dim) * 3.0).half()]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 16, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 5, "dim": 301},
        {"batch_size": 2, "dim": 1500},
    ]
