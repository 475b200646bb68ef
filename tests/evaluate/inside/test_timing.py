"""Timing inside the worker (kope.evaluate.inside.timing): run indices, the run count, the median."""

from __future__ import annotations

import time

from kope.evaluate.inside import timing


def test_each_run_gets_the_next_index_and_at_least_three_runs_happen() -> None:
    seen: list[int] = []
    _, runs, method = timing.measure(seen.append, device="cpu", interpreted=True, budget_ms=0.0)
    assert runs == 3 and seen == [0, 1, 2]
    assert method == "interpreter-wall"


def test_fast_calls_stop_at_fifty_runs_within_the_budget() -> None:
    seen: list[int] = []
    _, runs, method = timing.measure(seen.append, device="cpu", interpreted=False, budget_ms=10_000.0)
    assert runs == 50 and seen == list(range(50))
    assert method == "cpu-wall"


def test_the_median_ignores_a_slow_first_run() -> None:
    """A first call that compiles or warms a cache must not set the time: the median does, not the mean."""

    def call(index: int) -> None:
        if index == 0:
            time.sleep(0.08)

    ms, runs, _ = timing.measure(call, device="cpu", interpreted=False, budget_ms=0.0)
    assert runs == 3
    assert ms < 40.0, f"the slow first run leaked into the reported time ({ms:.1f} ms)"
    assert timing.median([80.0, 0.1, 0.2]) == 0.2
