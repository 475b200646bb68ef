"""Triage throughput, local processes against a local Ray cluster, in one run; and Ray's overhead per task.

1. Overhead: N jobs that do nothing (a worker that returns its job) through the in-process executor,
   the local pool (2 processes) and Ray (2 CPUs); Ray's overhead per task is its time per job minus
   the in-process one.
2. Throughput: the same run made from the suite (`kope.triage.sample`, small cases) triaged with the
   local executor (2 workers) and with Ray (2 CPUs), each with a cold reference cache of its own;
   candidates per minute, and whether Ray's classes and repairs equal the local ones.

Usage: .venv/bin/python benchmarks/triage_throughput.py [--ops 4] [--noop 200]
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kope.evaluate import EvalOptions
from kope.executors import Executor, LocalExecutor
from kope.executors.raycluster import RayExecutor
from kope.triage import TriageSummary, triage
from kope.triage.sample import SMALL_OPS, make_run


class Echo:
    def run(self, job: Any) -> Any:
        return job

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class EchoFactory:
    def __call__(self) -> Echo:
        return Echo()


def noop_seconds(executor: Executor, jobs: int) -> float:
    list(executor.map(EchoFactory(), range(4)))  # workers started and warm
    began = time.monotonic()
    done = list(executor.map(EchoFactory(), range(jobs)))
    assert sorted(done) == list(range(jobs))
    return time.monotonic() - began


def outcome(summary: TriageSummary) -> dict[str, tuple[str, str, str]]:
    return {r.id: (r.before, r.after, r.repair) for r in summary.rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ops", type=int, default=4, help="Problems (the suite's smallest operators), 5 candidates each."
    )
    parser.add_argument("--noop", type=int, default=200, help="No-op jobs for the overhead measurement.")
    parser.add_argument("--noop-only", action="store_true", help="Only the overhead measurement.")
    args = parser.parse_args()
    console = Console()
    ray = RayExecutor(num_cpus=2, object_store_mb=128)
    try:
        overhead = Table(title=f"{args.noop} no-op jobs")
        for column in ("executor", "seconds", "ms per job"):
            overhead.add_column(column, justify="right" if column != "executor" else "left")
        pool = LocalExecutor(2)
        try:
            for name, executor in (("in-process", LocalExecutor(1)), ("local pool, 2", pool), ("ray, 2 CPUs", ray)):
                seconds = noop_seconds(executor, args.noop)
                overhead.add_row(name, f"{seconds:.3f}", f"{1000 * seconds / args.noop:.2f}")
        finally:
            pool.close()
        console.print(overhead)
        if args.noop_only:
            return
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            run = make_run(root / "run", ops=SMALL_OPS[: args.ops], near_misses=1, broken=2, small=True)
            table = Table(title=f"triage of {len(run.expected)} candidates ({platform.machine()}, trials=1)")
            for column in ("executor", "seconds", "candidates/min", "saved", "same as local"):
                table.add_column(column, justify="right" if column != "executor" else "left")
            results: dict[str, TriageSummary] = {}
            for name, executor in (("local, 2 workers", LocalExecutor(2)), ("ray, 2 CPUs", ray)):
                began = time.monotonic()
                summary = triage(
                    run.tasks,
                    run.candidates,
                    root / name.split(",")[0],
                    executor=executor,
                    options=EvalOptions(trials=1),
                    cache_dir=root / f"cache-{name.split(',')[0]}",
                )
                seconds = time.monotonic() - began
                if isinstance(executor, LocalExecutor):
                    executor.close()
                results[name] = summary
                same = (
                    "-" if name.startswith("local") else str(outcome(summary) == outcome(results["local, 2 workers"]))
                )
                table.add_row(
                    name, f"{seconds:.1f}", f"{60 * len(summary.rows) / seconds:.2f}", str(summary.saved), same
                )
            console.print(table)
    finally:
        ray.close()


if __name__ == "__main__":
    main()
