"""Scatter-add along dim 1: out = zeros(M, K).scatter_add(1, index, src), index and src of shape (M, N), many collisions."""
import torch
import torch.nn as nn

M = 64
N = 512
K = 48


class Model(nn.Module):
    def __init__(self, num_cols: int):
        super().__init__()
        self.num_cols = num_cols

    def forward(self, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(src.shape[0], self.num_cols, dtype=src.dtype, device=src.device)
        return out.scatter_add(1, index, src)


def get_inputs():
    return [torch.randn(M, N), torch.randint(0, K, (M, N))]


def get_init_inputs():
    return [K]


def get_cases():
    return [
        {"M": 64, "N": 512, "K": 48},
        {"M": 1, "N": 1, "K": 1},
        {"M": 13, "N": 301, "K": 37},
        {"M": 3, "N": 4000, "K": 700},
    ]
