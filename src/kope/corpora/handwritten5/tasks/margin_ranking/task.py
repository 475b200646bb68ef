"""Margin ranking loss, mean: mean(max(0, -y * (x1 - x2) + margin)) with y in {-1, 1}; margin an init argument."""
import torch
import torch.nn as nn
import torch.nn.functional as F

n = 8192
margin = 0.5


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.margin_ranking_loss(x1, x2, y, margin=self.margin)


def get_inputs():
    y = torch.randint(0, 2, (n,)).float() * 2.0 - 1.0
    return [torch.randn(n), torch.randn(n), y]


def get_init_inputs():
    return [margin]


def get_cases():
    return [
        {"n": 8192},
        {"n": 1},
        {"n": 3001},
        {"n": 40000},
    ]
