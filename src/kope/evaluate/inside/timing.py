"""Time a forward call inside a worker.

On CUDA, like `triton.testing.do_bench`: warm up, estimate one run, then time as many runs as fit in
a budget in milliseconds, flushing the L2 cache before each and synchronising the whole device
before the end event (work left on side streams is counted), and report the median. On the CPU the
Triton interpreter's wall time is reported as such: it says nothing about speed on a device.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Literal

import torch

_CACHE_BYTES = 256 * 1024 * 1024
median = statistics.median
"""Taken when kope's worker starts, before any candidate code runs: patching statistics later is moot.
Public because the integrity monitor watches it for replacement."""

Method = Literal["cuda-events", "interpreter-wall", "cpu-wall"]


def measure(
    fn: Callable[[int], object], *, device: str, interpreted: bool, budget_ms: float = 200.0
) -> tuple[float, int, Method]:
    """Median milliseconds of `fn(i)` over runs i = 0, 1, 2..., the number of timed runs, the method.

    The run index lets the caller rotate between several input sets, so that a candidate caching
    its last result cannot fake its time.
    """
    if device.startswith("cuda"):
        median, runs = _cuda(fn, budget_ms)
        return median, runs, "cuda-events"
    median, runs = _wall(fn, budget_ms)
    return median, runs, "interpreter-wall" if interpreted else "cpu-wall"


def _cuda(call: Callable[[int], object], budget_ms: float) -> tuple[float, int]:
    counter = iter(range(1 << 62))

    def fn() -> object:
        return call(next(counter))

    cache = torch.empty(_CACHE_BYTES // 4, dtype=torch.int32, device="cuda")
    fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        cache.zero_()
        fn()
    torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 3, 1e-3)
    runs = int(min(max(budget_ms / estimate, 5), 1000))
    for _ in range(int(min(max(25 / estimate, 1), 100))):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for begin, finish in zip(starts, ends, strict=True):
        cache.zero_()
        begin.record()
        fn()
        torch.cuda.synchronize()
        finish.record()
    torch.cuda.synchronize()
    return median(b.elapsed_time(f) for b, f in zip(starts, ends, strict=True)), runs


def _wall(fn: Callable[[int], object], budget_ms: float) -> tuple[float, int]:
    times: list[float] = []
    spent = 0.0
    while len(times) < 3 or (spent < budget_ms and len(times) < 50):
        began = time.perf_counter()
        fn(len(times))
        elapsed = (time.perf_counter() - began) * 1000
        times.append(elapsed)
        spent += elapsed
    return median(times), len(times)
