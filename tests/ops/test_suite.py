"""Every operator of the built-in suite is well formed and its kernel passes evaluation."""

from __future__ import annotations

import ast

import pytest

from kope.cases.task import load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.ops import UnknownOpError, get_op, list_ops

OPS = list_ops()


def test_catalog_has_the_required_operators() -> None:
    assert len(OPS) >= 24
    assert len({op.name for op in OPS}) == len(OPS)
    assert {"matmul", "softmax", "layernorm", "attention", "cross_entropy", "cumsum"} <= {op.name for op in OPS}
    with pytest.raises(UnknownOpError, match="softmax"):
        get_op("sofmax")


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_operator_files_are_well_formed(op) -> None:
    task = load_task(op.task_path)
    assert task.defines_get_cases, "suite tasks declare their cases"
    kernel = ast.parse(op.kernel_path.read_text())
    classes = {node.name for node in kernel.body if isinstance(node, ast.ClassDef)}
    assert "ModelNew" in classes
    jitted = [
        node.name
        for node in kernel.body
        if isinstance(node, ast.FunctionDef)
        and any("jit" in ast.unparse(decorator) for decorator in node.decorator_list)
    ]
    assert jitted, "a suite kernel is written in Triton"


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_operator_kernel_passes_every_case(evaluator: Evaluator, op) -> None:
    task = load_task(op.task_path)
    cases = evaluator.cases(task)
    assert len(cases) >= 3
    assert any(min(v for v in c.overrides.values() if isinstance(v, int)) == 1 for c in cases), "a size of 1"
    result = evaluator.evaluate(task, op.kernel_path, options=EvalOptions(trials=2), cases=cases)
    assert result.status == "pass", [(c.name, c.error, c.max_abs_err) for c in result.cases if not c.passed]
