"""The experience store's write rate with atomic runs: SQLite and PostgreSQL, 1 and 4 writer processes.

Each writer writes RUNS runs, each in one `atomic` block under its own key (a task, a run, STEPS steps
of version + decision + evaluation + edges, its end), the way `kope triage` records a repair. The
PostgreSQL server is a throwaway one on loopback (`kope.memory.pglocal`). After each measurement
`check()` must find nothing wrong and every run must be there.

Usage: .venv/bin/python benchmarks/store_writers.py [--runs 40] [--steps 5]
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kope.cases.task import load_task
from kope.memory import DecisionIn, ExperienceStore
from kope.memory.pglocal import LocalPostgres
from kope.ops import get_op
from kope.protocol.results import EvalResult


def write(url: str, writer: int, runs: int, steps: int, ready: Any) -> None:
    task = load_task(get_op("relu").task_path)
    store = ExperienceStore.open(url)
    ready.wait()
    for index in range(runs):
        with store.atomic(key=f"bench-{writer}-{index}"):
            record = store.ensure_task(task)
            run = store.start_run("debug", record.id, model="offline", device="cpu")
            parent = None
            for step in range(steps):
                result = EvalResult(
                    status="fail", cases=[], cases_run="all", task="t", candidate="c", device="cpu", seed=0
                )
                made = DecisionIn(kind="edit", text=f"step {step}") if parent is not None else None
                stored = store.record_step(
                    run.id,
                    record.id,
                    f"# {writer} {index} {step}\nx = {step}\n",
                    parent_id=parent,
                    made=made,
                    result=result,
                )
                parent = stored.version.id
            store.finish_run(run.id, status="unrepaired", stop_reason="bench", best_version=parent)
    store.close()


def measure(url: str, writers: int, runs: int, steps: int) -> tuple[float, int]:
    ExperienceStore.open(url).close()
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(writers + 1)  # the clock starts when every writer has imported kope and opened the store
    processes = [context.Process(target=write, args=(url, n, runs // writers, steps, ready)) for n in range(writers)]
    for process in processes:
        process.start()
    ready.wait()
    start = time.time()
    for process in processes:
        process.join()
        assert process.exitcode == 0, f"a writer failed ({process.exitcode})"
    seconds = time.time() - start
    with ExperienceStore.open(url) as store:
        problems = store.check()
        assert not problems, problems
        count = len(store.runs())
    assert count == (runs // writers) * writers, count
    return seconds, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="Runs in all (split between the writers).")
    parser.add_argument("--steps", type=int, default=5, help="Steps per run.")
    args = parser.parse_args()
    table = Table(
        title=f"atomic runs of {args.steps} steps, {args.runs} runs per measurement "
        f"({platform.machine()}, {multiprocessing.cpu_count()} cores)"
    )
    for column in ("store", "writers", "runs/s", "steps/s", "seconds"):
        table.add_column(column, justify="right" if column != "store" else "left")
    with tempfile.TemporaryDirectory() as scratch, LocalPostgres.start() as server:
        for backend in ("sqlite", "postgresql"):
            for writers in (1, 4):
                url = (
                    f"sqlite:///{Path(scratch) / f'w{writers}.db'}"
                    if backend == "sqlite"
                    else server.create_database(f"bench_w{writers}")
                )
                seconds, count = measure(url, writers, args.runs, args.steps)
                table.add_row(
                    backend,
                    str(writers),
                    f"{count / seconds:.1f}",
                    f"{count * args.steps / seconds:.0f}",
                    f"{seconds:.2f}",
                )
    Console().print(table)


if __name__ == "__main__":
    main()
