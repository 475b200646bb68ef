"""Scaled dot-product attention softmax(Q K^T / sqrt(d)) V in float16, non-causal, (batch, heads, seq, head_dim)."""
import math

import torch
import torch.nn as nn

batch = 2
heads = 4
seq = 64
head_dim = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [
        torch.randn(batch, heads, seq, head_dim, dtype=torch.float16),
        torch.randn(batch, heads, seq, head_dim, dtype=torch.float16),
        torch.randn(batch, heads, seq, head_dim, dtype=torch.float16),
    ]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 2, "heads": 4, "seq": 64, "head_dim": 32},
        {"batch": 1, "heads": 1, "seq": 1, "head_dim": 1},
        {"batch": 1, "heads": 3, "seq": 130, "head_dim": 24},
        {"batch": 3, "heads": 2, "seq": 17, "head_dim": 64},
    ]
