"""Cross-entropy of logits (batch, classes) against int64 class indices, mean over the batch (0-d)."""
import torch
import torch.nn as nn

batch = 64
classes = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(batch, classes), torch.randint(0, classes, (batch,))]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch": 64, "classes": 1000},
        {"batch": 1, "classes": 1},
        {"batch": 33, "classes": 130},
        {"batch": 5, "classes": 5003},
    ]
