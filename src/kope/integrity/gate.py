"""The integrity gate of an evaluation: static findings, what each case observed, one verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kope.cases.task import Case, Task
from kope.integrity.dynamic import (
    RunContext,
    cache_probe_finding,
    implausible_speedup,
    observation_findings,
    sealed_channel_finding,
    shape_specialization,
    size_one_copies,
    verdict,
)
from kope.integrity.static import StaticContext, check_source
from kope.protocol import Observations, PlanInfo, ValueMeta, WorkerResult
from kope.protocol.policy import decide
from kope.protocol.results import CaseResult, Finding, Integrity

__all__ = [
    "RunContext",
    "assess",
    "cache_probe_finding",
    "implausible_speedup",
    "observed",
    "run_context",
    "sealed_channel_finding",
    "static_context",
]

PROVENANCE_DECIDES = frozenset({"torch-compute", "kernel-not-launched"})
"""Static rules that only warn when the run-time provenance ran: it sees what really computed the output."""


def observed(observations: Observations | None, context: RunContext | None = None) -> list[Finding]:
    return observation_findings(observations, context)


def run_context(
    reference: WorkerResult, plan: PlanInfo, override: str | None = None, *, first_case: bool = True
) -> RunContext:
    """The policy for a case (from --policy, the task's INTEGRITY_POLICY, or what the reference calls)."""
    chosen, reason = decide(override, plan.integrity_policy, reference.reference_ops)
    return RunContext(
        policy=chosen,
        reason=reason,
        reference_ops=tuple(reference.reference_ops) if reference.reference_ops is not None else None,
        reference_init_ops=frozenset(reference.reference_init_ops),
        reference_inputs=frozenset(reference.reference_inputs_read)
        if reference.reference_inputs_read is not None
        else None,
        allow_torch=frozenset(plan.allow_torch),
        judge_copies=first_case,
    )


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


def assess(
    source: str,
    context: StaticContext,
    cases: Sequence[CaseResult],
    *,
    provenance: bool = False,
    policy: RunContext | None = None,
) -> Integrity:
    """Static findings, each case's findings and the cross-case ones, merged into one verdict.

    `provenance`: the cases ran under the run-time monitor, so the static rules it supersedes warn."""
    findings = check_source(source, context)
    if provenance:
        findings = [_early_warning(f) for f in findings]
    for case in cases:
        findings.extend(size_one_copies(case, cases))
    findings.extend(shape_specialization(cases))
    result = verdict(findings)
    if policy is not None:
        result = result.model_copy(update={"policy": policy.policy, "policy_reason": policy.reason})
    return result


def _early_warning(finding: Finding) -> Finding:
    if finding.rule not in PROVENANCE_DECIDES or finding.severity != "reject" or "kernel body" in finding.message:
        return finding
    return finding.model_copy(
        update={
            "severity": "warn",
            "message": finding.message + " (a warning: what ran decides, see the run-time findings)",
        }
    )
