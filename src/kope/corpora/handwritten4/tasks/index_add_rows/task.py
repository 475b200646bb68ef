"""Rows of src, scaled by alpha, added into a zero (M, D) output at row indices idx:
zeros.index_add_(0, idx, src, alpha=alpha).
N > M, so indices repeat and the kernel needs atomic adds."""
import torch
import torch.nn as nn

M = 32
N = 256
D = 128
alpha = 0.5


class Model(nn.Module):
    def __init__(self, M: int, alpha: float):
        super().__init__()
        self.M = M
        self.alpha = alpha

    def forward(self, src: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.M, src.shape[1], dtype=src.dtype, device=src.device)
        return out.index_add_(0, idx, src, alpha=self.alpha)


def get_inputs():
    return [torch.randn(N, D), torch.randint(0, M, (N,))]


def get_init_inputs():
    return [M, alpha]


def get_cases():
    return [
        {"M": 32, "N": 256, "D": 128},
        {"M": 1, "N": 1, "D": 1},
        {"M": 7, "N": 45, "D": 77},
        {"M": 5, "N": 20, "D": 1500},
    ]
