"""KL divergence with reduction='batchmean': input holds log-probabilities, target probabilities (some exactly 0)."""
import torch
import torch.nn as nn

batch_size = 32
classes = 200


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.kl_div(log_pred, target, reduction="batchmean")


def get_inputs():
    log_pred = torch.log_softmax(torch.randn(batch_size, classes), dim=-1)
    target = torch.softmax(torch.randn(batch_size, classes) * 2.0, dim=-1)
    target = target * (torch.rand(batch_size, classes) > 0.3)
    return [log_pred, target]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"batch_size": 32, "classes": 200},
        {"batch_size": 1, "classes": 1},
        {"batch_size": 7, "classes": 1025},
        {"batch_size": 129, "classes": 10},
    ]
