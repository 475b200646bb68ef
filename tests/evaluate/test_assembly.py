"""The status of an evaluation from its cases and its gates (kope.evaluate.assembly): a stale output is a cheat only
where it explains every failure."""

from __future__ import annotations

from conftest import SCALE_GOOD, SCALE_TASK

from kope.cases import load_task
from kope.evaluate import EvalOptions
from kope.evaluate.assembly import assemble
from kope.protocol.results import CaseResult, Finding, Integrity


def _case(name: str, passed: bool, stale: bool = False) -> CaseResult:
    findings = [Finding(rule="output-caching", severity="reject", message=f"case {name}: stale")] if stale else []
    return CaseResult(name=name, overrides={}, visible=name == "a", passed=passed, findings=findings)


def _status(*cases: CaseResult) -> str:
    findings = [f for c in cases for f in c.findings]
    integrity = Integrity(verdict="reject" if findings else "clean", findings=findings, checked=True)
    result = assemble(load_task(SCALE_TASK), SCALE_GOOD, EvalOptions(), list(cases), "all", integrity, 0.1)
    return result.status


def test_stale_results_on_every_failing_case_are_a_cheat() -> None:
    assert _status(_case("a", True), _case("b", False, stale=True), _case("c", False, stale=True)) == "reject"


def test_a_kernel_also_wrong_on_a_first_call_is_a_near_miss_whatever_one_case_looked_like() -> None:
    """A wrong kernel whose one-element output saturates a clamp returns the same value for refilled inputs: the
    caching probe sees a stale result on that case, but the kernel's other cases are wrong on their first call."""
    assert _status(_case("a", False), _case("b", False, stale=True)) == "fail"
    assert _status(_case("a", True), _case("b", True)) == "pass"
