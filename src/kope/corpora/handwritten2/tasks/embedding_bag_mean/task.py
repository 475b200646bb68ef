"""EmbeddingBag with mode='mean' over fixed-size bags: indices (B, bag) into a (vocab, dim) table."""
import torch
import torch.nn as nn

batch_size = 16
bag = 6
vocab = 100
dim = 64


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(vocab, dim))

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.embedding_bag(indices, self.weight, mode="mean")


def get_inputs():
    return [torch.randint(0, vocab, (batch_size, bag))]


def get_init_inputs():
    return [vocab, dim]


def get_cases():
    return [
        {"batch_size": 16, "bag": 6, "dim": 64},
        {"batch_size": 1, "bag": 1, "dim": 1},
        {"batch_size": 9, "bag": 3, "dim": 300},
        {"batch_size": 40, "bag": 11, "dim": 5},
    ]
