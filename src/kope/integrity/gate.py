"""The integrity gate of an evaluation: static findings, what each case observed, one verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kope.evaluate.protocol import Observations, ValueMeta
from kope.evaluate.results import CaseResult, Finding, Integrity
from kope.integrity.dynamic import (
    cache_probe_finding,
    implausible_speedup,
    observation_findings,
    shape_specialization,
    verdict,
)
from kope.integrity.static import StaticContext, check_source
from kope.task import Case, Task

__all__ = ["assess", "cache_probe_finding", "implausible_speedup", "observed", "static_context"]


def observed(observations: Observations | None) -> list[Finding]:
    return observation_findings(observations)


def static_context(
    task: Task,
    sizes: Mapping[str, object],
    visible: Case,
    inputs: ValueMeta | None,
    allow_torch: Sequence[str] = (),
) -> StaticContext:
    effective = {name: value for name, value in sizes.items()}
    effective.update(visible.overrides)
    return StaticContext(
        task_names=frozenset(task.assigned_names),
        visible_sizes=effective,
        float32_task=_floating_dtypes(inputs) == {"float32"},
        extra_allow=frozenset(allow_torch),
    )


def _floating_dtypes(meta: ValueMeta | None) -> set[str]:
    if meta is None:
        return set()
    if meta.type == "tensor":
        dtype = meta.dtype or ""
        return {dtype} if dtype.startswith(("float", "bfloat")) else set()
    found: set[str] = set()
    for item in meta.items:
        found |= _floating_dtypes(item)
    return found


def assess(source: str, context: StaticContext, cases: Sequence[CaseResult]) -> Integrity:
    """Static findings, each case's findings and the cross-case ones, merged into one verdict."""
    findings = check_source(source, context)
    for case in cases:
        findings.extend(case.findings)
    findings.extend(shape_specialization(cases))
    return verdict(findings)
