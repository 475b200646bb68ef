"""Cosine similarity of two matrices along each row (dim=1, eps=1e-8): one value per row."""
import torch
import torch.nn as nn

batch_size = 64
dim = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cosine_similarity(a, b, dim=1, eps=1e-8)


def get_inputs():
    a = torch.randn(batch_size, dim)
    return [a, a * 0.5 + torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 64, "dim": 512},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 5, "dim": 3000},
        {"batch_size": 100, "dim": 37},
    ]
