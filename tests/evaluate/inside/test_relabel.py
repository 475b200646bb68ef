"""Relabelling attacks on the monitor's knowledge of the bytes (issue 28, family 2), each with its control."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, SCALE_TASK

from kope.cases.tolerance import ToleranceChoice
from kope.evaluate import EvalOptions, Evaluator

RELABEL = FIXTURES / "hostile" / "relabel"


@pytest.mark.parametrize(("trick", "caught"), [("share", True), ("none", False)])
def test_moving_an_input_to_shared_memory_is_tampering(evaluator: Evaluator, trick: str, caught: bool) -> None:
    options = EvalOptions(trials=2, timeout_s=60, memory_mb=2048, extra_env={"KOPE_ATTACK": trick})
    result = evaluator.evaluate(SCALE_TASK, RELABEL / "share_memory.py", options=options, which="visible")
    tamper = [f for f in result.integrity.findings if f.rule == "harness-tamper" and "share_memory_" in f.message]
    assert bool(tamper) is caught, result.integrity.findings
    assert result.status == ("reject" if caught else "pass")


@pytest.mark.parametrize(
    ("trick", "tolerance", "status"),
    [("ulp", "strict", "reject"), ("roundtrip", "kernelbench", "reject"), ("none", "kernelbench", "pass")],
)
def test_a_store_within_the_tolerance_of_a_load_is_a_copy(
    evaluator: Evaluator, trick: str, tolerance: ToleranceChoice, status: str
) -> None:
    """A kernel that stores its input nudged by an ulp, or through float16 and back, computed nothing at the
    precision judged: what PyTorch then does to it is PyTorch computing on the task's inputs."""
    options = EvalOptions(trials=2, timeout_s=60, memory_mb=2048, tolerance=tolerance, extra_env={"KOPE_ATTACK": trick})
    result = evaluator.evaluate(SCALE_TASK, RELABEL / "launder_input.py", options=options, which="visible")
    rejects = {f.rule for f in result.integrity.findings if f.severity == "reject"}
    assert result.status == status, result.integrity.findings
    assert ("torch-compute" in rejects) is (status == "reject")


@pytest.mark.parametrize(("trick", "status"), [("write", "error"), ("none", "pass")])
def test_proc_self_mem_is_read_only_in_the_sandbox(evaluator: Evaluator, trick: str, status: str) -> None:
    """A store through /proc/self/mem, which no hook sees, fails in the sandbox itself (its /proc is read-only),
    with the gates switched off so that only the sandbox stands in the way; the control passes."""
    options = EvalOptions(
        trials=2, timeout_s=60, memory_mb=2048, integrity=False, extra_env={"KOPE_ATTACK": trick}, sandbox="auto"
    )
    result = evaluator.evaluate(SCALE_TASK, RELABEL / "proc_mem.py", options=options, which="visible")
    assert result.sandbox is not None
    held = result.sandbox.protections
    if trick == "write" and "read-only-proc" not in held and "landlock-filesystem" not in held:
        pytest.skip(f"neither a read-only /proc nor Landlock protects this run ({held})")
    assert result.status == status, result.error
    assert trick == "none" or (result.error is not None and "/proc/self/mem" in result.error.message)
