"""Triplet margin loss (p = 2, eps = 1e-6 inside the pairwise distance), mean over the batch; margin an init argument."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 256
margin = 1.0


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=2.0, eps=1e-6)


def get_inputs():
    anchor = torch.randn(batch_size, dim)
    return [anchor, anchor + torch.randn(batch_size, dim), anchor + torch.randn(batch_size, dim)]


def get_init_inputs():
    return [margin]


def get_cases():
    return [
        {"batch_size": 64, "dim": 256},
        {"batch_size": 1, "dim": 1},
        {"batch_size": 37, "dim": 93},
        {"batch_size": 5, "dim": 3000},
    ]
