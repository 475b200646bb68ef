"""Embedding lookup scaled by sqrt(embedding dim), as at a transformer's input: emb(idx) * sqrt(d)."""
import math

import torch
import torch.nn as nn

num_embeddings = 1000
embedding_dim = 128
batch_size = 8
seq_len = 64


class Model(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__()
        self.emb = nn.Embedding(num_embeddings, embedding_dim)
        self.scale = math.sqrt(embedding_dim)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.emb(idx) * self.scale


def get_inputs():
    return [torch.randint(0, num_embeddings, (batch_size, seq_len))]


def get_init_inputs():
    return [num_embeddings, embedding_dim]


def get_cases():
    return [
        {"num_embeddings": 1000, "embedding_dim": 128, "batch_size": 8, "seq_len": 64},
        {"num_embeddings": 1, "embedding_dim": 1, "batch_size": 1, "seq_len": 1},
        {"num_embeddings": 97, "embedding_dim": 77, "batch_size": 3, "seq_len": 41},
        {"num_embeddings": 50, "embedding_dim": 1200, "batch_size": 2, "seq_len": 5},
    ]
