"""Guards that bound a repair loop, each with the stop reason it gives.

- `iteration-limit`: the number of model calls reached the limit (default 8);
- `token-budget`: prompt plus completion tokens reached the budget;
- `time-budget`: the wall-clock budget ran out;
- `no-progress`: the error measure has not improved for `patience` evaluated versions;
- `repeated-failure`: the same failure (same error signature) several times in a row.

Oscillation (a version seen before) and regression (worse than the best so far) do not stop the
loop: the version is refused or reverted and the model is told; they count as no progress.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LoopLimits:
    max_iterations: int = 8
    max_tokens: int = 200_000
    max_seconds: float = 1800.0
    patience: int = 4
    repeat_limit: int = 3


Score = tuple[int, float, float]
"""(tier, mismatch, error) — lower is better: tier 3 does not run, 2 wrong on the shown cases,
1 right there but wrong on hidden cases or rejected by the gates, 0 accepted."""


@dataclass
class Guards:
    limits: LoopLimits = field(default_factory=LoopLimits)
    started: float = field(default_factory=time.monotonic)
    best: Score | None = None
    stale: int = 0
    last_signature: str | None = None
    repeats: int = 0

    def before_call(self, iterations: int, tokens: int) -> str | None:
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

    def after_step(self) -> str | None:
        if self.repeats >= self.limits.repeat_limit:
            return "repeated-failure"
        if self.stale >= self.limits.patience:
            return "no-progress"
        return None
