"""The fourth red team (issue 28, "Attack it yourself"): attacks written after reading the sealed channel, the
monitor and the sandbox, one or more per family of the issue, each with its control (the same code without its
trick is caught, or passes when honest). The candidates are in tests/fixtures/hostile/{after_check, relabel, told,
boundary, escapes}; each picks its trick from the job's KOPE_ATTACK variable."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, SCALE_TASK

from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import EvalResult

HOSTILE = FIXTURES / "hostile"
PAIR_TASK = FIXTURES / "tasks" / "scale_pair.py"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")


def run(
    evaluator: Evaluator, task: Path, attack: str, trick: str, *, which: str = "all", **options: object
) -> EvalResult:
    env = {"KOPE_ATTACK": trick}
    chosen = EvalOptions(trials=2, timeout_s=60, memory_mb=2048, extra_env=env, **options)  # type: ignore[arg-type]
    return evaluator.evaluate(task, HOSTILE / attack, options=chosen, which=which)  # type: ignore[arg-type]


def rules(result: EvalResult) -> set[str]:
    found = {f.rule for f in result.integrity.findings if f.severity == "reject"} if result.integrity else set()
    return found | {f.rule for case in result.cases for f in case.findings}


def numerically_failed(result: EvalResult) -> bool:
    return bool(result.cases) and all(not case.passed and case.error is None for case in result.cases)


# -- family 1: forged after the check ---------------------------------------------------------------------------


@pytest.mark.parametrize("trick", ["iter", "none", "honest"])
def test_an_output_container_runs_no_code_of_the_candidate_after_forward(evaluator: Evaluator, trick: str) -> None:
    """A tuple subclass whose __iter__ fixes the first output with PyTorch when kope walks it after forward (to check
    it, to pack it): packed from the tuple it holds, through the builtin tuple's own slots, its 3x fails. Before the
    fix, the attack passed every case."""
    result = run(evaluator, PAIR_TASK, "after_check/pack_iter.py", trick)
    if trick == "honest":
        assert result.status == "pass", (result.error, result.integrity)
    else:
        assert numerically_failed(result), (result.status, [c.passed for c in result.cases])


@pytest.fixture(scope="module")
def evaluator() -> Iterator[Evaluator]:
    with Evaluator() as shared:
        yield shared


# -- family 2: reads and relabels no hook sees ------------------------------------------------------------------


@pytest.mark.parametrize("trick", ["view", "none"])
def test_an_output_rewritten_through_a_view_by_address_is_caught(evaluator: Evaluator, trick: str) -> None:
    """NumPy overwrites what the kernel stored through an `__array_interface__` view of data_ptr(): under the
    interpreter kope knows what each store left in memory, and the output no longer holds it. Before the fix the
    attack passed every case; the control (the kernel's 3x alone) fails on its values."""
    result = run(evaluator, SCALE_TASK, "relabel/array_interface.py", trick)
    if trick == "none":
        assert numerically_failed(result) and "harness-tamper" not in rules(result)
    else:
        assert result.status == "reject" and "harness-tamper" in rules(result), result.integrity
        assert all(case.passed for case in result.cases), "numerically right: only the gate stops it"


# -- family 3: what the job tells the candidate -----------------------------------------------------------------


@pytest.mark.parametrize("trick", ["sentinel", "none"])
def test_a_candidate_that_recognises_the_ghost_replay_is_still_caught(evaluator: Evaluator, trick: str) -> None:
    """The ghost replay announces itself (a launch that writes nothing); a candidate that returns its unwritten
    output then passes the replay, but what wrote the output is judged on every trial: a fresh allocation that
    neither a kernel nor PyTorch wrote holds data (`host-compute`). The control, which does not look, is caught by
    the replay as well."""
    result = run(evaluator, SCALE_TASK, "told/ghost_sentinel.py", trick)
    assert result.status == "reject" and "host-compute" in rules(result), result.integrity
    assert ("kernel-not-launched" in rules(result)) is (trick == "none")
