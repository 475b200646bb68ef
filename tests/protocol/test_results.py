"""The typed results and reports that cross process boundaries survive their JSON as they were."""

from __future__ import annotations

from kope.protocol.inputs import InputTransform
from kope.protocol.results import CaseResult, EvalResult, Finding, Integrity, LowSignal, Timing
from kope.protocol.sandbox import SandboxReport


def test_an_evaluation_result_round_trips_through_json() -> None:
    case = CaseResult(
        name="odd",
        overrides={"N": 129},
        inputs=InputTransform(scale=4.0, pattern="outliers"),
        visible=False,
        passed=False,
        max_abs_err=0.5,
        timing=Timing(method="cpu-wall", candidate_ms=1.5),
        findings=[Finding(rule="torch-compute", severity="reject", message="calls torch.matmul", line=3)],
    )
    result = EvalResult(
        status="fail",
        cases=[case],
        integrity=Integrity(verdict="reject", findings=case.findings, checked=True),
        cases_run="all",
        task="task.py",
        candidate="candidate.py",
        device="cpu",
        seed=0,
        low_signal=LowSignal(reason="output 0 equals input 0", extra_cases=["widened"]),
        sandbox=SandboxReport(level="landlock", missing=["namespaces: refused"]),
    )
    again = EvalResult.model_validate_json(result.model_dump_json())
    assert again == result
    assert (again.passed, again.exit_code) == (False, 1)


def test_an_input_transform_says_what_it_does() -> None:
    assert InputTransform().identity and InputTransform().model_dump() == {"scale": 1.0, "shift": 0.0}
    assert InputTransform(scale=100.0, shift=1.0, pattern="arange").label() == "arange*100+1"


def test_a_sandbox_report_says_what_did_not_hold() -> None:
    report = SandboxReport(level="process", missing=["landlock: unsupported"])
    assert report.weaker_than_namespaces and report.summary() == "sandbox: process (landlock: unsupported)"
