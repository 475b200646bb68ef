"""The reference's parameters reach the candidate when models rename or transpose them (the worker's
`_copy_reference_state`): by name, by the name's words and layer index, then by a shape only one tensor on each
side has, then transposed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from kope.evaluate import EvalOptions, Evaluator
from kope.ops import get_op

STATE = FIXTURES / "state"
OPTIONS = EvalOptions(trials=1, timeout_s=60, memory_mb=2048)


@pytest.mark.parametrize("fixture", ["renamed_parameters.py", "transposed_weight.py"])
def test_renamed_and_transposed_parameters_get_the_reference_values(evaluator: Evaluator, fixture: str) -> None:
    task = get_op("linear_bias_relu").task_path
    result = evaluator.evaluate(task, STATE / fixture, options=OPTIONS)
    assert result.status == "pass", (result.error, [c.max_abs_err for c in result.cases])


def test_a_same_named_tensor_of_another_shape_gets_the_values_only_where_only_ones_differ(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """The (out, 1) bias is the reference's (out,) one reshaped: copied, every case right (a model that keeps a
    bias as `(1,)` for the reference's `(1, 1, 1, 1)` failed on its own zeros). An (out, 2) bias of which the kernel
    reads a column is not the reference's: left alone, wrong values, no crash."""
    task = get_op("linear_bias_relu").task_path
    result = evaluator.evaluate(task, STATE / "same_name_other_shape.py", options=OPTIONS, which="visible")
    assert result.error is None and result.status == "pass", [c.max_abs_err for c in result.cases]
    other = (STATE / "same_name_other_shape.py").read_text()
    other = other.replace("torch.zeros(out_features, 1)", "torch.zeros(out_features, 2)")
    other = other.replace("self.linear.bias.view(-1)", "self.linear.bias[:, 0].contiguous()")
    (tmp_path / "other.py").write_text(other)
    result = evaluator.evaluate(task, tmp_path / "other.py", options=OPTIONS, which="visible")
    assert result.error is None and result.status == "fail"


def test_layered_parameters_get_the_reference_values_by_their_words_and_index(evaluator: Evaluator) -> None:
    """`gru.weight_hh_l1_reverse` reaches `W_hh.3` (transposed): every one of the sixteen tensors, so every case
    passes; before, the same-shaped tensors of the layers were left at their random values."""
    result = evaluator.evaluate(STATE / "gru_task.py", STATE / "gru_layer_lists.py", options=OPTIONS, which="visible")
    assert result.error is None
    assert result.cases and all(case.passed for case in result.cases), [c.max_abs_err for c in result.cases]


def test_names_pair_only_when_each_side_has_one_partner() -> None:
    """`lstm.weight_hh_l0` pairs with `weight_hh.0`; a bare `weight` never pairs by words (too little said), and
    two candidate tensors that both fit one reference name leave it to the later passes."""
    import torch

    from kope.evaluate.inside.worker import _pairs_by_words

    reference = {
        "lstm.weight_hh_l0": torch.zeros(8, 2),
        "lstm.weight_hh_l1": torch.zeros(8, 2),
        "fc.weight": torch.zeros(3, 2),
        "norm.bias": torch.zeros(2),
    }
    own = {
        "weight_hh.0": torch.zeros(8, 2),
        "weight_hh_l1": torch.zeros(2, 8),
        "weight": torch.zeros(3, 2),
        "norm_bias": torch.zeros(2),
        "block.norm.bias": torch.zeros(2),
    }
    assert sorted(_pairs_by_words(reference, own, [])) == [
        ("lstm.weight_hh_l0", "weight_hh.0", False),
        ("lstm.weight_hh_l1", "weight_hh_l1", True),
    ]


def test_tensors_equal_already_pair_so_that_the_one_left_of_a_shape_is_copied(evaluator: Evaluator) -> None:
    """A Linear's bias, an extra bias and a GroupNorm's weight and bias share one shape; the model named them
    `lin_bias`, `bias`, `gn_weight`, `gn_bias`. The norm's ones and zeros equal the reference's, so they pair;
    `lin_bias` is then the one tensor of its shape left and gets the Linear's bias. Before, it kept its own
    random values and every element was wrong."""
    task, candidate = STATE / "gemm_groupnorm_task.py", STATE / "gemm_groupnorm_renamed.py"
    result = evaluator.evaluate(task, candidate, options=OPTIONS, which="visible")
    assert result.error is None
    assert result.cases and all(case.passed for case in result.cases), [c.max_abs_err for c in result.cases]


def test_equal_tensors_pair_only_one_to_one() -> None:
    import torch

    from kope.evaluate.inside.worker import _pairs_by_value

    reference = {"norm.weight": torch.ones(4), "norm.bias": torch.zeros(4), "other.weight": torch.ones(3)}
    own = {"gn_weight": torch.ones(4), "gn_bias": torch.zeros(4), "w1": torch.ones(3), "w2": torch.ones(3)}
    assert sorted(_pairs_by_value(reference, own, [])) == [
        ("norm.bias", "gn_bias", False),
        ("norm.weight", "gn_weight", False),
    ]  # two candidate tensors equal `other.weight`: neither pairs
    assert _pairs_by_value(reference, own, [("norm.weight", "gn_weight", False)]) == [("norm.bias", "gn_bias", False)]


def test_a_weight_kept_in_pieces_gets_the_reference_columns(evaluator: Evaluator) -> None:
    """`i2h`, a Linear over `cat((x, h), dim=1)`, kept as `W_x` (hidden, input) and `W_h` (hidden, hidden):
    the reference weight's columns split in the model's order. Before, both kept their random values."""
    task, candidate = STATE / "rnn_cell_task.py", STATE / "rnn_cell_split.py"
    result = evaluator.evaluate(task, candidate, options=OPTIONS, which="visible")
    assert result.error is None
    assert result.cases and all(case.passed for case in result.cases), [c.max_abs_err for c in result.cases]


def test_pieces_pair_only_as_one_run_in_the_models_order() -> None:
    import torch

    from kope.evaluate.inside.worker import _split_pieces

    reference = {"i2h.weight": torch.zeros(4, 6), "gates.weight": torch.zeros(8, 5)}
    own = {"W_x": torch.zeros(4, 2), "W_h": torch.zeros(4, 4), "bias": torch.zeros(4), "W_i": torch.zeros(4, 5)}
    own["W_f"] = torch.zeros(4, 5)
    assert _split_pieces(reference, own, []) == [
        ("i2h.weight", ["W_x", "W_h"], 1),
        ("gates.weight", ["W_i", "W_f"], 0),
    ]
    # a piece paired already leaves no run for its tensor; two runs that fit one tensor: neither is taken
    assert _split_pieces(reference, own, [("x", "W_x", False)]) == [("gates.weight", ["W_i", "W_f"], 0)]
    twice = {"a": torch.zeros(4, 3), "b": torch.zeros(4, 3), "c": torch.zeros(4, 3)}
    assert _split_pieces({"w": torch.zeros(4, 6)}, twice, []) == []


TWO_LAYER_TASK = """
import torch
import torch.nn as nn

batch = 4
features = 16
hidden = 8
classes = 4


class Model(nn.Module):
    def __init__(self, features, hidden, classes):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(features, hidden), nn.GELU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.head(x)


def get_inputs():
    return [torch.randn(batch, features)]


def get_init_inputs():
    return [features, hidden, classes]


def get_cases():
    return [{}, {"hidden": 1, "classes": 1}, {"hidden": 1, "classes": 1, "batch": 3}]
"""

TWO_LAYER_CANDIDATE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, features, hidden, classes):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(hidden, features))
        self.b1 = nn.Parameter(torch.randn(hidden))
        self.w2 = nn.Parameter(torch.randn(classes, hidden))
        self.b2 = nn.Parameter(torch.randn(classes))

    def forward(self, x):
        return F.linear(F.gelu(F.linear(x, self.w1, self.b1)), self.w2, self.b2)
"""


def test_a_case_that_gives_two_tensors_one_shape_pairs_them_as_the_first_case_did(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Renamed biases of two layers: told apart by shape at the task's sizes ((8,) and (4,)); on a case of width one
    (kope's derived `one-partial` makes such cases) both are (1,), and before, neither got the reference's values
    there (a near miss that was not)."""
    task = tmp_path / "level2" / "1_TwoLayers.py"
    task.parent.mkdir()
    task.write_text(TWO_LAYER_TASK)
    candidate = tmp_path / "candidate.py"
    candidate.write_text(TWO_LAYER_CANDIDATE)
    result = evaluator.evaluate(task, candidate, options=OPTIONS)
    colliding = [c for c in result.cases if c.overrides.get("hidden") == 1 and c.overrides.get("classes") == 1]
    assert colliding, [c.overrides for c in result.cases]
    assert all(c.passed for c in result.cases), [(c.name, c.max_abs_err) for c in result.cases]
