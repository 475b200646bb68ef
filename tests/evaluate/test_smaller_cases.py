"""A kernel the interpreter runs too slowly at the derived sizes is judged again at smaller derived sizes
(`EvalOptions.interpreter_retries`), and the result says so; a task's own cases are never shrunk."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import FIXTURES

from kope.cases.task import load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import CaseResult

SLOW = FIXTURES / "slow"


def test_a_first_case_that_times_out_is_judged_again_at_a_smaller_budget(evaluator: Evaluator) -> None:
    options = EvalOptions(trials=1, timeout_s=15, memory_mb=2048, max_elements=200_000, interpreter_retries=2)
    result = evaluator.evaluate(SLOW / "task.py", SLOW / "slow_when_large.py", options=options)
    assert result.status == "pass", (result.error, result.smaller_cases)
    assert result.smaller_cases is not None and "cases derived again at" in result.smaller_cases
    assert max(c.numel or 0 for c in result.cases) < 200_000


def test_without_retries_the_timeout_is_the_verdict(evaluator: Evaluator) -> None:
    options = EvalOptions(trials=1, timeout_s=15, memory_mb=2048, max_elements=200_000, interpreter_retries=0)
    result = evaluator.evaluate(SLOW / "task.py", SLOW / "slow_when_large.py", options=options, which="visible")
    assert result.status == "error" and result.error is not None and result.error.kind == "timeout"
    assert result.smaller_cases is None


def test_the_cost_probe_derives_smaller_cases_before_the_first_case_can_time_out(evaluator: Evaluator) -> None:
    """The smallest case runs first; from its seconds per forward the first case (200,000 elements: 100 s of
    sleep) is predicted to outlive the 20 s limit, so the cases are derived again without waiting for it."""
    options = EvalOptions(trials=1, timeout_s=20, memory_mb=2048, max_elements=200_000)
    seen: list[CaseResult] = []
    result = evaluator.evaluate(SLOW / "task_3d.py", SLOW / "slow_per_element.py", options=options, on_case=seen.append)
    assert result.status == "pass", (result.error, result.smaller_cases)
    assert result.smaller_cases is not None and "would need about" in result.smaller_cases
    assert not [c.name for c in seen if c.error is not None], "no case waited for its time limit"
    assert max(c.numel or 0 for c in result.cases) < 100_000


def test_the_cost_probe_leaves_a_fast_kernel_at_the_full_budget(evaluator: Evaluator) -> None:
    options = EvalOptions(trials=1, timeout_s=20, memory_mb=2048, max_elements=200_000)
    result = evaluator.evaluate(SLOW / "task_3d.py", SLOW / "scale.py", options=options)
    assert result.status == "pass" and result.smaller_cases is None
    assert max(c.numel or 0 for c in result.cases) > 50_000


def test_a_later_case_that_times_out_is_judged_again_at_a_smaller_budget(evaluator: Evaluator) -> None:
    options = EvalOptions(trials=1, timeout_s=15, memory_mb=2048, max_elements=200_000, interpreter_retries=2)
    result = evaluator.evaluate(SLOW / "task_3d.py", SLOW / "slow_when_odd.py", options=options)
    assert result.status == "pass", (result.error, result.smaller_cases)
    assert result.smaller_cases is not None and result.smaller_cases.startswith("case odd outlived")


def test_fit_derives_smaller_cases_for_a_session_of_many_evaluations(evaluator: Evaluator) -> None:
    """A repair session evaluates one kernel dozens of times: `fit` runs the cost probe alone and derives the cases
    again where the first case would take longer than the session gives one evaluation."""
    options = EvalOptions(trials=1, timeout_s=20, memory_mb=2048, max_elements=200_000)
    fitted, note = evaluator.fit(SLOW / "task_3d.py", SLOW / "slow_per_element.py", options, seconds=4.0)
    assert note is not None and "more than the 4 s it may take" in note
    assert fitted.max_elements is not None and fitted.max_elements < 100_000
    assert fitted.timeout_s == options.timeout_s and fitted.trials == options.trials
    # a power of two: the same cases whatever the load did to the probe's time, unless it halved or doubled it
    assert fitted.max_elements & (fitted.max_elements - 1) == 0, fitted.max_elements
    kept, none = evaluator.fit(SLOW / "task_3d.py", SLOW / "scale.py", options, seconds=4.0)
    assert none is None and kept == options


def test_fit_measures_the_first_case_where_the_probe_is_all_fixed_cost(evaluator: Evaluator) -> None:
    """The probe's forward costs what any forward does, so it predicts the first case fits; the kernel's time grows
    as the square of the elements (25 s on the first case). `fit` runs the first case once, limited to twice its
    share, sees it outlive that, and derives the cases again where the two times predict the share holds."""
    options = EvalOptions(trials=1, timeout_s=30, memory_mb=2048, max_elements=200_000)
    task = load_task(SLOW / "task_3d.py")
    began = time.monotonic()
    fitted, note = evaluator.fit(task, SLOW / "slow_superlinear.py", options, seconds=4.0)
    assert note is not None and "outlived 8 s on the first case" in note, note
    assert time.monotonic() - began < 25, "the first case was not waited for to its end"
    assert fitted.max_elements is not None and fitted.max_elements < 100_000
    first = evaluator.cases(task, options=fitted)[0]
    result = evaluator.evaluate(task, SLOW / "slow_superlinear.py", options=fitted, cases=[first])
    assert result.status == "pass" and result.cases[0].forward_s is not None and result.cases[0].forward_s < 8


def test_fit_measures_rather_than_extrapolates_a_probe_of_mostly_fixed_cost(evaluator: Evaluator) -> None:
    """A forward that costs 0.7 s whatever its size: the probe's excess over what any forward costs, multiplied by
    the ratio of the elements, predicted two minutes for the first case (the cases were derived again at 8,192
    elements); a machine's load moves that excess as much as a kernel's work does. The first case is measured
    instead: it takes as long as the probe, and the cases stay as derived."""
    options = EvalOptions(trials=1, timeout_s=20, memory_mb=2048, max_elements=200_000)
    kept, note = evaluator.fit(SLOW / "task_3d.py", SLOW / "slow_fixed.py", options, seconds=4.0)
    assert note is None and kept == options


def test_fit_probes_a_smaller_derivation_where_no_derived_case_is_small(
    evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the reference ties the sizes together, every derived case is about as large as the first and none can
    probe the cost: the probe is then the first case of a derivation at an eighth of the first case's elements."""
    options = EvalOptions(trials=1, timeout_s=20, memory_mb=2048, max_elements=200_000)
    monkeypatch.setattr(evaluator, "_probe", lambda *args: None)
    probe = evaluator._scaled_probe(load_task(SLOW / "task_3d.py"), options)
    assert probe is not None and probe.elements * 4 <= probe.first_elements
    fitted, note = evaluator.fit(SLOW / "task_3d.py", SLOW / "slow_per_element.py", options, seconds=4.0)
    assert note is not None and "more than the 4 s it may take" in note
    assert fitted.max_elements is not None and fitted.max_elements < 100_000


def test_a_debug_session_starts_on_cases_fitted_to_the_candidate(evaluator: Evaluator, tmp_path: Path) -> None:
    from kope.agents.environment import SandboxEnvironment
    from kope.cases.task import load_task

    options = EvalOptions(trials=1, timeout_s=20, memory_mb=2048, max_elements=200_000)
    env = SandboxEnvironment(evaluator, options=options)
    task = load_task(SLOW / "task_3d.py")
    env.deadline = time.monotonic() + 60.0  # a twentieth of it per evaluation: the slow kernel does not fit
    cases = env.start(task, tmp_path / "out.py", (SLOW / "slow_per_element.py").read_text())
    full = [c.key() for c in evaluator.cases(task, options=options)]
    assert env.fitted is not None and [c.key() for c in cases] != full
    assert env.options.max_elements is not None and env.options.max_elements < 200_000
    assert env.options.timeout_s == options.timeout_s
    again = env.start(task, tmp_path / "out.py")  # no version given: the task's cases, as derived
    assert env.fitted is None and [c.key() for c in again] == full
