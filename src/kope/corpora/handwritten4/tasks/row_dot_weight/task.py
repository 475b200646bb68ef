"""Matrix-vector product with a parameter vector: x @ w, x (M, K) float16, w (K,) float16."""
import torch
import torch.nn as nn

M = 64
K = 1024


class Model(nn.Module):
    def __init__(self, K: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(K).half() * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() @ self.weight.float()).half()


def get_inputs():
    return [torch.randn(M, K).half()]


def get_init_inputs():
    return [K]


def get_cases():
    return [
        {"M": 64, "K": 1024},
        {"M": 1, "K": 1},
        {"M": 13, "K": 777},
        {"M": 5, "K": 4096},
    ]
