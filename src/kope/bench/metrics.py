"""Metrics over attempt rows: Pass@1, Pass@k, tokens per success, integrity rejections, diagnosis accuracy.

Rows are grouped by arm (strategy, ablation, model), then overall (`all`) and per taxonomy id.
Pass@k per case is the unbiased estimator 1 - C(n - c, k) / C(n, k) over that case's n samples with c
successes (kope.agents.regenerate.pass_at_k), averaged over the cases that have n >= k samples.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from kope.agents.regenerate import pass_at_k
from kope.bench.harness import NEEDS_MODEL, Attempt

ALL = "all"


class Metrics(BaseModel):
    strategy: str
    arm: str
    model: str
    label: str
    """`all`, or one taxonomy id."""
    cases: int
    attempts: int
    needs_model: bool = False
    """Every attempt said the model cannot do this strategy (regenerate with the offline model)."""
    successes: int = 0
    accepted: int = 0
    """Attempts the workflow itself accepted (more than `successes` when the gates were off)."""
    pass_at_1: float | None = None
    k: int = 1
    pass_at_k: float | None = None
    """None when no case has k samples."""
    integrity_rejected: int = 0
    tokens: int = 0
    tokens_per_success: float | None = None
    """All tokens spent (failed attempts included) per success."""
    mean_tokens_per_success: float | None = None
    """Mean tokens of the successful attempts."""
    top1: float | None = None
    top3: float | None = None
    """Diagnosis accuracy against the labels (debug attempts, first sample of each case)."""
    diagnosed: int = 0
    mean_iterations: float = 0.0
    wall_s_mean: float = 0.0
    job_s_mean: float = 0.0
    job_s_total: float = 0.0
    eval_s_mean: float = 0.0
    loop_other_s_mean: float = 0.0
    """Per attempt, the strategy's time outside evaluations (diagnosis analysis, prompts, model, recipes)."""
    harness_s_mean: float = 0.0
    """Per attempt, the worker's time outside the strategy and outside evaluations."""
    errors: int = 0
    """Attempts the harness could not run (harness-error)."""

    @property
    def arm_key(self) -> tuple[str, str, str]:
        return (self.strategy, self.arm, self.model)


def tokens_per_success(rows: Sequence[Attempt]) -> tuple[float | None, float | None]:
    """(all tokens / successes, mean tokens of a successful attempt); None without successes."""
    wins = [r for r in rows if r.passed]
    if not wins:
        return None, None
    return sum(r.tokens for r in rows) / len(wins), sum(r.tokens for r in wins) / len(wins)


def pass_rates(rows: Sequence[Attempt], k: int) -> tuple[float | None, float | None]:
    """(Pass@1, Pass@k) averaged over cases; Pass@k over the cases with at least k samples."""
    by_case: dict[str, list[Attempt]] = defaultdict(list)
    for row in rows:
        by_case[row.case].append(row)
    if not by_case:
        return None, None
    ones = [pass_at_k(len(r), sum(a.passed for a in r), 1) for r in by_case.values()]
    enough = [r for r in by_case.values() if len(r) >= k]
    at_k = [pass_at_k(len(r), sum(a.passed for a in r), k) for r in enough]
    return statistics.fmean(ones), (statistics.fmean(at_k) if at_k else None)


def diagnosis_accuracy(rows: Sequence[Attempt]) -> tuple[float | None, float | None, int]:
    """(top-1, top-3, attempts counted) over the first sample of each case of debug attempts."""
    counted = [r for r in rows if r.strategy == "debug" and r.sample == 0 and r.outcome != "harness-error"]
    if not counted:
        return None, None, 0
    top1 = sum(r.label in r.hypotheses[:1] for r in counted) / len(counted)
    top3 = sum(r.label in r.hypotheses[:3] for r in counted) / len(counted)
    return top1, top3, len(counted)


def summarise(rows: Sequence[Attempt], *, strategy: str, arm: str, model: str, label: str, k: int) -> Metrics:
    usable = [r for r in rows if r.outcome != "harness-error"]
    p1, pk = pass_rates(usable, k)
    total_per_success, mean_per_success = tokens_per_success(usable)
    top1, top3, diagnosed = diagnosis_accuracy(usable)
    needs_model = bool(usable) and all(r.outcome == NEEDS_MODEL for r in usable)

    def mean(values: Iterable[float]) -> float:
        values = list(values)
        return round(statistics.fmean(values), 3) if values else 0.0

    return Metrics(
        strategy=strategy,
        arm=arm,
        model=model,
        label=label,
        cases=len({r.case for r in rows}),
        attempts=len(rows),
        needs_model=needs_model,
        successes=sum(r.passed for r in usable),
        accepted=sum(r.accepted for r in usable),
        pass_at_1=None if needs_model else p1,
        k=k,
        pass_at_k=None if needs_model else pk,
        integrity_rejected=sum(r.integrity_rejected for r in usable),
        tokens=sum(r.tokens for r in usable),
        tokens_per_success=total_per_success,
        mean_tokens_per_success=mean_per_success,
        top1=top1,
        top3=top3,
        diagnosed=diagnosed,
        mean_iterations=mean(r.iterations for r in usable),
        wall_s_mean=mean(r.wall_s for r in usable),
        job_s_mean=mean(r.job_s for r in usable),
        job_s_total=round(sum(r.job_s for r in usable), 1),
        eval_s_mean=mean(r.eval_s for r in usable),
        loop_other_s_mean=mean(max(0.0, r.wall_s - (r.eval_s - r.check_s)) for r in usable),
        harness_s_mean=round(statistics.fmean(harness_seconds(r) for r in usable), 6) if usable else 0.0,
        errors=len(rows) - len(usable),
    )


def harness_seconds(row: Attempt) -> float:
    """The worker's own time for an attempt: the job minus the strategy and minus the harness's checks."""
    return max(0.0, row.job_s - row.wall_s - row.check_s)


def compute(rows: Sequence[Attempt], *, k: int = 1) -> list[Metrics]:
    """Metrics per arm: overall first, then per taxonomy id (sorted)."""
    arms: dict[tuple[str, str, str], list[Attempt]] = defaultdict(list)
    for row in rows:
        arms[(row.strategy, row.arm, row.model)].append(row)
    found: list[Metrics] = []
    for (strategy, arm, model), arm_rows in sorted(arms.items(), key=lambda item: _arm_order(item[0])):
        found.append(summarise(arm_rows, strategy=strategy, arm=arm, model=model, label=ALL, k=k))
        labels: dict[str, list[Attempt]] = defaultdict(list)
        for row in arm_rows:
            labels[row.label].append(row)
        for label in sorted(labels):
            found.append(summarise(labels[label], strategy=strategy, arm=arm, model=model, label=label, k=k))
    return found


def _arm_order(key: tuple[str, str, str]) -> tuple[int, str, int, str]:
    strategy, arm, model = key
    return (0 if strategy == "debug" else 1, model, 0 if arm == "none" else 1, arm)
