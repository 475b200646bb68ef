"""Embedding table lookup (nn.Embedding) of int64 indices of shape (batch, seq)."""
import torch
import torch.nn as nn

num_embeddings = 1000
embedding_dim = 96
batch = 8
seq = 64


class Model(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return self.embedding(indices)


def get_inputs():
    return [torch.randint(0, num_embeddings, (batch, seq))]


def get_init_inputs():
    return [num_embeddings, embedding_dim]


def get_cases():
    return [
        {"num_embeddings": 1000, "embedding_dim": 96, "batch": 8, "seq": 64},
        {"num_embeddings": 1, "embedding_dim": 1, "batch": 1, "seq": 1},
        {"num_embeddings": 5003, "embedding_dim": 130, "batch": 3, "seq": 17},
        {"num_embeddings": 7, "embedding_dim": 1000, "batch": 5, "seq": 9},
    ]
