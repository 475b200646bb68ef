"""Every kernel of the operator suite passes the cases kope derives from its task's single shape.

Derivation never looks at `get_cases()`: it sees each suite task as a KernelBench file with one shape.
The visible derived case is the task's own shape, which `test_suite.py` already evaluates; the hidden
ones (odd, prime, one, scaled and shifted inputs) run here.
"""

from __future__ import annotations

import pytest

from kope.cases.task import build_cases, load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.ops import list_ops

OPS = list_ops()


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_operator_kernel_passes_its_derived_cases(evaluator: Evaluator, op) -> None:
    task = load_task(op.task_path)
    derived = evaluator.derivation(task, EvalOptions())
    assert derived.error is None and len(derived.kept) >= 3, derived.candidates
    cases = build_cases(task, derived.case_dicts(), source="derived cases")
    assert [c.name for c in cases if c.visible] == ["original"], "suite tasks fit the CPU budget"
    hidden = [c.name for c in cases if not c.visible]
    options = EvalOptions(trials=1, integrity=False)
    result = evaluator.evaluate(task, op.kernel_path, options=options, cases=cases, which=hidden)
    assert result.status == "pass", [(c.name, c.error, c.max_abs_err) for c in result.cases if not c.passed]
