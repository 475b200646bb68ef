"""The reference's parameters reach the candidate when models rename or transpose them (the worker's
`_copy_reference_state`): by name, then by a shape only one tensor on each side has, then transposed."""

from __future__ import annotations

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


def test_a_same_named_tensor_of_another_shape_is_left_alone(evaluator: Evaluator) -> None:
    """The weight is copied by name; the (out, 1) bias is not the reference's (out,) one: wrong values, no crash."""
    task = get_op("linear_bias_relu").task_path
    result = evaluator.evaluate(task, STATE / "same_name_other_shape.py", options=OPTIONS, which="visible")
    assert result.error is None and result.status == "fail"
