"""F.lp_pool1d with p = 2 on (B, C, L); kernel size and stride are init arguments."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
C = 8
L = 128
kernel_size = 4
stride = 2


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.lp_pool1d(x, 2.0, self.kernel_size, self.stride)


def get_inputs():
    return [torch.randn(B, C, L)]


def get_init_inputs():
    return [kernel_size, stride]


def get_cases():
    return [
        {"B": 4, "C": 8, "L": 128},
        {"B": 1, "C": 1, "L": 4},
        {"B": 3, "C": 5, "L": 151},
        {"B": 2, "C": 3, "L": 700},
    ]
