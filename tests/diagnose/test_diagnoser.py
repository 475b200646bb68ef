"""The layout probes: the visible case made square, with random and symmetric inputs."""

from __future__ import annotations

import torch

from kope.cases.task import Case
from kope.diagnose.diagnoser import square_cases
from kope.evaluate.inside.shapes import transform_inputs


def test_square_cases_equalise_the_sizes_and_keep_small_ones() -> None:
    visible = Case(name="v", overrides={"M": 128, "K": 96, "N": 112, "kernel_size": 3}, visible=True)
    square, symmetric = square_cases([visible, Case(name="h", overrides={"M": 1}, visible=False)])
    assert square.overrides == {"M": 96, "K": 96, "N": 96, "kernel_size": 3} == symmetric.overrides
    assert not square.visible and square.inputs is None
    assert symmetric.inputs is not None and symmetric.inputs.pattern == "symmetric"


def test_square_cases_need_two_different_sizes() -> None:
    assert square_cases([Case(name="v", overrides={"M": 64, "N": 64}, visible=True)]) == []
    assert square_cases([Case(name="v", overrides={"n": 1000}, visible=True)]) == []


def test_symmetric_inputs_keep_values_and_symmetrise_square_matrices() -> None:
    square, wide, vector = torch.randn(2, 4, 4), torch.randn(3, 5), torch.randn(7)
    out = transform_inputs([square, wide, vector], 1.0, 0.0, "symmetric")
    assert torch.allclose(out[0], out[0].transpose(-1, -2))
    assert torch.allclose(out[0], (square + square.transpose(-1, -2)) / 2)
    assert torch.equal(out[1], wide) and torch.equal(out[2], vector)
