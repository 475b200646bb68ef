"""What every kope loop shares: the guards that bound it, its transcript, and how it scores and names a version.

The debug loop, the optimize loop and the offline repair search (kope.repair.search) all use this
module, so it sits below agents/ and repair/ and imports neither.

Guards, each with the stop reason it gives:

- `iteration-limit`: the number of model calls (or decisions) reached the limit (default 8);
- `token-budget`: prompt plus completion tokens reached the budget;
- `time-budget`: the wall-clock budget ran out;
- `no-progress`: the error measure has not improved for `patience` evaluated versions;
- `repeated-failure`: the same failure (same error signature) several times in a row.

Oscillation (a version seen before) and regression (worse than the best so far) do not stop the
loop: the version is refused or reverted and the model is told; they count as no progress.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from kope.protocol.results import CaseResult, EvalError, EvalResult

StopReason = Literal[
    "repaired",
    "unstable",
    "search-exhausted",
    "model-exhausted",
    "model-error",
    "iteration-limit",
    "token-budget",
    "time-budget",
    "no-progress",
    "repeated-failure",
    "incorrect-start",
    "untimed-start",
    "already-right",
]
"""Why a loop stopped. The guards' five are above; `repaired` (accepted on every case and by the gates),
`unstable` (the accepted version failed its second full evaluation), `search-exhausted` (the offline
search and every proposer had nothing left), `model-exhausted` (no proposer had anything left),
`model-error` (a model call failed for good); the optimize loop's `incorrect-start` (the starting
kernel is wrong on some case) and `untimed-start` (it could not be timed); the debug loop's `already-right`
(the kernel as given was right on every case and by the gates: status `pass`, nothing changed)."""

STOP_REASONS: tuple[str, ...] = get_args(StopReason)
"""Every stop reason, in the order above (what `kope debug --help` and docs/guide/contracts.md list)."""


@dataclass(frozen=True)
class LoopLimits:
    max_iterations: int = 8
    max_tokens: int = 200_000
    max_seconds: float = 1800.0
    patience: int = 4
    repeat_limit: int = 3


Score = tuple[int, float, float]
"""(tier, mismatch, error) — lower is better: tier 3 does not run (1.0, or 0.5 where it ran to outputs of the wrong
shape or dtype), 2 wrong on the shown cases, 1 right there but wrong on hidden cases or rejected by the gates, 0
accepted."""

RAN_TO_OUTPUTS = 0.5
"""The second part of an error's score where the version ran to the end and returned outputs whose structure or
dtype is not the reference's (0.4 where only their shape is off: the comparison checks the dtype first): closer to
right than one that stops before (an import, a compile refusal, a launch), so a search that mends one rule of
several (a missing function, then the output's dtype, then its layout) keeps each version and builds on it."""


def version_score(result: EvalResult) -> Score:
    """Lower is better: (0 right, 1 rejected by the gates, 2 wrong, 3 error), the mismatch fraction (for an error,
    `RAN_TO_OUTPUTS` where the outputs came back of the wrong shape or dtype, else 1.0), the
    worst relative error (the largest, 1e12, where NaN or infinite elements stand where the reference's are finite:
    the measured errors skip them). The debug loop and the repair search rank versions with this one measure."""
    if result.status == "error":
        return (3, _how_far(result.error), 0.0)
    failing = [c for c in result.cases if not c.passed and c.outside is None]  # a refused case is not judged
    if failing:
        mismatch = sum(_wrong_fraction(c) for c in failing) / len(result.cases)
        worst = max(1e12 if any(o.nan_mismatch for o in c.outputs) else (c.max_rel_err or 0.0) for c in failing)
        return (2, round(mismatch, 6), round(min(worst, 1e12), 6))
    return (1, 0.0, 0.0) if result.status == "reject" else (0, 0.0, 0.0)


def _how_far(error: EvalError | None) -> float:
    """An error's place in the score: 1.0 before any output, `RAN_TO_OUTPUTS` for outputs of the wrong structure or
    dtype, a tenth less for outputs whose shape alone is off."""
    from kope.evaluate.compare import shape_only

    if error is None or error.kind != "shape":
        return 1.0
    return RAN_TO_OUTPUTS - 0.1 if shape_only(error.message) else RAN_TO_OUTPUTS


def _wrong_fraction(case: CaseResult) -> float:
    """A failing case's fraction of wrong elements, where an output holding one value (`OutputDiff.constant`)
    counts whole: its elements that happen to equal the reference's (a zeroed output where a ReLU is zero) are not
    progress, and a search that took them as such would build on a version that ignores its inputs."""
    fraction = case.mismatch_fraction or 1.0
    if not any(o.constant is not None for o in case.outputs):
        return fraction
    total = sum(o.numel for o in case.outputs)
    wrong = sum(o.numel if o.constant is not None else o.mismatch_count for o in case.outputs)
    return max(fraction, wrong / total) if total else fraction


@dataclass
class Guards:
    limits: LoopLimits = field(default_factory=LoopLimits)
    started: float = field(default_factory=time.monotonic)
    best: Score | None = None
    """The best score seen: the one place a loop keeps it."""
    stale: int = 0
    last_signature: str | None = None
    repeats: int = 0

    def before_call(self, iterations: int, tokens: int) -> StopReason | None:
        if iterations >= self.limits.max_iterations:
            return "iteration-limit"
        if tokens >= self.limits.max_tokens:
            return "token-budget"
        if time.monotonic() - self.started >= self.limits.max_seconds:
            return "time-budget"
        return None

    def improved(self, score: Score) -> bool:
        """Record an evaluated version's score; True when it is the best so far."""
        if self.best is None or score < self.best:
            self.best = score
            self.stale = 0
            return True
        self.stale += 1
        return False

    def no_progress(self) -> None:
        """A step that produced no new version (edit refused, oscillation, no edit)."""
        self.stale += 1

    def failure(self, signature: str) -> None:
        if signature == self.last_signature:
            self.repeats += 1
        else:
            self.last_signature, self.repeats = signature, 1

    def after_step(self) -> StopReason | None:
        if self.repeats >= self.limits.repeat_limit:
            return "repeated-failure"
        if self.stale >= self.limits.patience:
            return "no-progress"
        return None


class Transcript:
    """JSON lines: every prompt, reply, evaluation, diagnosis and token count."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")

    def write(self, event: str, **data: Any) -> None:
        if self.path is None:
            return
        record = {"event": event, "time": round(time.time(), 3), **data}
        with self.path.open("a") as handle:
            handle.write(json.dumps(record, default=str) + "\n")
