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
