"""Smoothed Dice score per batch item: (2 * sum(p * t) + smooth) / (sum(p) + sum(t) + smooth), over (H, W)."""
import torch
import torch.nn as nn

batch = 8
height = 64
width = 64
smooth = 1.0


class Model(nn.Module):
    def __init__(self, smooth: float):
        super().__init__()
        self.smooth = smooth

    def forward(self, p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        inter = (p * t).sum(dim=(1, 2))
        total = p.sum(dim=(1, 2)) + t.sum(dim=(1, 2))
        return (2.0 * inter + self.smooth) / (total + self.smooth)


def get_inputs():
    return [torch.rand(batch, height, width), (torch.rand(batch, height, width) > 0.7).float()]


def get_init_inputs():
    return [smooth]


def get_cases():
    return [
        {"batch": 8, "height": 64, "width": 64},
        {"batch": 1, "height": 1, "width": 1},
        {"batch": 3, "height": 17, "width": 29},
        {"batch": 2, "height": 9, "width": 700},
    ]
