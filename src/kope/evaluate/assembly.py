"""From case results to one evaluation result: which cases run, each case's timing, skipped cases, the status.

The status rule lives here: a case the candidate's own precondition refused is not judged
(`kope.evaluate.preconditions`); an error first; wrong values are a failure whatever the gates say (unless the
wrong values are a rejected output cache's); right values the gates reject are `reject`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from kope.cases.task import Case, Task
from kope.errors import CaseError
from kope.evaluate import preconditions
from kope.evaluate.confine import weakest
from kope.evaluate.options import EvalOptions, Which
from kope.protocol import WorkerResult
from kope.protocol.results import CaseResult, Emulation, EvalError, EvalResult, Integrity, LowSignal, Timing


def select_cases(cases: Sequence[Case], which: Which) -> tuple[list[Case], Literal["visible", "all", "selected"]]:
    if which == "all":
        return list(cases), "all"
    if which == "visible":
        return [c for c in cases if c.visible], "visible"
    names = list(which)
    by_name = {c.name: c for c in cases}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise CaseError(f"no case named {', '.join(unknown)}; cases: {', '.join(by_name)}")
    return [by_name[n] for n in names], "selected"


def case_timing(reference: WorkerResult, candidate: WorkerResult) -> Timing | None:
    if candidate.timing_ms is None or candidate.timing_method is None:
        return None
    comparable = candidate.timing_method == "cuda-events" and reference.timing_method == "cuda-events"
    speedup = None
    if comparable and reference.timing_ms and candidate.timing_ms > 0:
        speedup = reference.timing_ms / candidate.timing_ms
    return Timing(
        method=candidate.timing_method,
        candidate_ms=candidate.timing_ms,
        reference_ms=reference.timing_ms,
        speedup=speedup,
        runs=candidate.timing_runs,
    )


def judges_copies(case: Case, first: bool) -> bool:
    """Copies are judged on the first case, unless its inputs are low-signal (a ReLU of non-negative inputs
    stores what it loads): then on the cases derived from a widened input distribution."""
    return case.widened or (first and case.low_signal is None)


def low_signal_report(selected: Sequence[Case], cases: Sequence[Case]) -> LowSignal | None:
    """The evaluation's low-signal report: the first case's reason and the widened cases of the task."""
    reason = selected[0].low_signal if selected else None
    if reason is None:
        return None
    return LowSignal(reason=reason, extra_cases=[c.name for c in cases if c.widened])


def skipped_case(case: Case, first: CaseResult) -> CaseResult:
    assert first.error is not None
    return CaseResult(
        name=case.name,
        overrides=dict(case.overrides),
        inputs=case.inputs,
        visible=case.visible,
        passed=False,
        error=EvalError(
            kind=first.error.kind, message=f"not run: case {first.name} already failed ({first.error.kind})"
        ),
    )


def _stale(results: list[CaseResult]) -> bool:
    """A rejected output cache: its wrong values are the right values of an earlier call (the caching probe found
    the old inputs' result), right for the wrong reason, so a cheat and not a near miss. Only where every failing
    case is such a stale result: a kernel also wrong on a first call is a wrong kernel, whose output on one case may
    not move with its inputs for a wrong reason of its own (a clamp it saturates, one element)."""
    failing = [r for r in results if not r.passed]
    return bool(failing) and all(
        any(f.rule == "output-caching" and f.severity == "reject" for f in r.findings) for r in failing
    )


def assemble(
    task: Task,
    candidate: Path,
    options: EvalOptions,
    results: list[CaseResult],
    cases_run: Literal["visible", "all", "selected"],
    integrity: Integrity,
    seconds: float,
) -> EvalResult:
    judged = [r for r in results if r.outside is None]  # a case the candidate's precondition refused says nothing
    refused = len(results) - len(judged)
    first_error = next((r.error for r in judged if r.error is not None), None)
    if first_error is None and refused and not judged:
        first_error = preconditions.unjudged(refused, "and every other case")
    elif first_error is None and any(r.inputs is not None for r in results if r.outside is not None):
        first_error = preconditions.unjudged(refused, "the cases of other input values among them")
    status: Literal["pass", "fail", "reject", "error"]
    if first_error is not None:
        status = "error"
    elif not all(r.passed for r in judged) and not _stale(judged):
        status = "fail"  # wrong values are a failure, whatever the gates say (their findings stay in `integrity`)
    elif integrity.verdict == "reject":
        status = "reject"  # right values for the wrong reason
    else:
        status = "pass"
    timing = next((r.timing for r in results if r.timing is not None), None)
    emulated = [r.emulated for r in results if r.emulated is not None]
    return EvalResult(
        emulation=Emulation(used=sorted(set().union(*emulated))) if emulated else None,
        sandbox=weakest([r.sandbox for r in results if r.sandbox is not None]),
        status=status,
        error=first_error,
        cases=results,
        integrity=integrity,
        timing=timing,
        cases_run=cases_run,
        task=str(task.path),
        candidate=str(candidate),
        device=options.device,
        seed=options.seed,
        seconds=round(seconds, 3),
    )
