"""A kernel the interpreter runs too slowly at the derived sizes is judged again at smaller derived sizes
(`EvalOptions.interpreter_retries`), and the result says so; a task's own cases are never shrunk."""

from __future__ import annotations

from conftest import FIXTURES

from kope.evaluate import EvalOptions, Evaluator

SLOW = FIXTURES / "slow"


def test_a_first_case_that_times_out_is_judged_again_at_a_smaller_budget(evaluator: Evaluator) -> None:
    options = EvalOptions(trials=1, timeout_s=6, memory_mb=2048, max_elements=200_000, interpreter_retries=2)
    result = evaluator.evaluate(SLOW / "task.py", SLOW / "slow_when_large.py", options=options)
    assert result.status == "pass", (result.error, result.smaller_cases)
    assert result.smaller_cases is not None and "cases derived again at" in result.smaller_cases
    assert max(c.numel or 0 for c in result.cases) < 200_000


def test_without_retries_the_timeout_is_the_verdict(evaluator: Evaluator) -> None:
    options = EvalOptions(trials=1, timeout_s=6, memory_mb=2048, max_elements=200_000, interpreter_retries=0)
    result = evaluator.evaluate(SLOW / "task.py", SLOW / "slow_when_large.py", options=options, which="visible")
    assert result.status == "error" and result.error is not None and result.error.kind == "timeout"
    assert result.smaller_cases is None
