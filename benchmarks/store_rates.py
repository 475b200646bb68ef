"""Experience store rates: inserts, queries, concurrent writers, and the context packer's time per prompt.

- inserts: `record_step` (version, decision, evaluation, edges: one transaction) per second, one writer;
- concurrent: 4 processes writing one SQLite store at once, steps per second in all (nothing lost: checked);
- queries: experience rows for the packer, a lineage (recursive query), pattern stats, best configurations;
- packer: candidates + scoring + exact packing for one prompt, against a store of the given size.

Usage: .venv/bin/python benchmarks/store_rates.py [--steps 2000] [--url sqlite:///...]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.cases.task import load_task
from kope.memory import DecisionIn, ExperienceStore
from kope.memory.packer import ExperiencePacker, Query
from kope.ops import list_ops
from kope.protocol.results import CaseResult, EvalResult, Timing

WRITER = textwrap.dedent("""
    import sys, time
    from kope.memory import DecisionIn, ExperienceStore
    from kope.cases.task import load_task
    url, task_path, worker, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    store = ExperienceStore.open(url)
    task = store.ensure_task(load_task(task_path))
    run = store.start_run("optimize", task.id, model=f"w{worker}", device="cpu-interpreter")
    parent = store.record_step(run.id, task.id, f"root_{worker} = 1\\n").version.id
    began = time.perf_counter()
    for step in range(steps):
        parent = store.record_step(run.id, task.id, f"w{worker}_{step} = 1\\n", parent_id=parent,
                                   made=DecisionIn(kind="edit", text=f"step {step}")).version.id
    print(time.perf_counter() - began)
""")


def timed(ms: float, status: str = "pass") -> EvalResult:
    case = CaseResult(
        name="c",
        overrides={},
        visible=True,
        passed=status == "pass",
        timing=Timing(method="interpreter-wall", candidate_ms=ms),
    )
    return EvalResult(
        status=status,
        cases=[case, case],
        cases_run="all",
        task="t",
        candidate="c",  # type: ignore[arg-type]
        device="cpu",
        seed=0,
    )


def fill(store: ExperienceStore, steps: int) -> tuple[float, int]:
    """`steps` decisions spread over the suite's tasks in runs of 20; (seconds, last version id)."""
    ops = list_ops()
    tasks = [store.ensure_task(load_task(op.task_path)) for op in ops]
    began = time.perf_counter()
    last = 0
    for index in range(steps):
        if index % 20 == 0:
            task = tasks[(index // 20) % len(tasks)]
            run = store.start_run("optimize", task.id, model="bench", device="cpu-interpreter")
            parent = store.record_step(run.id, task.id, f"# run {run.id}\nstart = 1\n", result=timed(100.0)).version.id
        ms = 100.0 * (0.6 + 0.8 * ((index * 7919) % 100) / 100)
        step = store.record_step(
            run.id,
            task.id,
            f"# run {run.id}\nv = {index}\n",
            parent_id=parent,
            result=timed(ms, "pass" if index % 5 else "fail"),
            made=DecisionIn(
                kind="launch-config",
                text=f"launch parameters BLOCK {index % 7} change",
                diff=f"-BLOCK = {index}\n+BLOCK = {index + 1}",
                params={"changes": {"const:BLOCK": [1024, 2048]}},
            ),
            evidence={f"decision:{max(1, index - 1)}": None},
        )
        if index % 20 == 19:
            store.finish_run(
                run.id,
                status="improved",
                stop_reason="bench",
                summary={"config": {"const:BLOCK": 2048}, "speedup_vs_start": 1.2},
            )
        parent = step.version.id if ms < 100 else parent
        last = step.version.id
    return time.perf_counter() - began, last


def per_call(fn: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--url", default=None, help="a SQLAlchemy URL (default: a fresh SQLite file)")
    args = parser.parse_args()
    console = Console(width=150)
    scratch = Path(tempfile.mkdtemp(prefix="kope-store-"))
    url = args.url or f"sqlite:///{scratch / 'memory.db'}"
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}, store {url.split('://')[0]}, {args.steps} steps"
    )
    table = Table(title="Experience store", title_justify="left")
    for column in ("operation", "rate", "median time"):
        table.add_column(column)
    with ExperienceStore.open(url) as store:
        seconds, last = fill(store, args.steps)
        table.add_row(
            "record_step (version + decision + evaluation + edges)",
            f"{args.steps / seconds:,.0f} /s",
            f"{1000 * seconds / args.steps:.2f} ms",
        )
        relu = store.ensure_task(load_task(list_ops()[0].task_path))
        queries = {
            "experience rows for the packer (400 newest)": lambda: store.experience(limit=400),
            "lineage of a version (recursive)": lambda: store.lineage(last),
            "pattern stats (all patterns)": lambda: store.pattern_stats(),
            "best configurations on the device": lambda: store.best_configs("cpu-interpreter"),
        }
        for name, fn in queries.items():
            median = per_call(fn, 15)
            table.add_row(name, f"{1 / median:,.0f} /s", f"{1000 * median:.2f} ms")
        packer = ExperiencePacker(store)
        query = Query(
            purpose="optimize",
            family="elementwise",
            signature=relu.signature,
            device="cpu-interpreter",
            task_id=relu.id,
            text="BLOCK launch parameters vectorise",
        )
        for budget in (1000, 4000):
            median = per_call(lambda budget=budget: packer.pack_alone(query, budget), 7)
            table.add_row(
                f"packer: one prompt's experience ({budget}-token budget)",
                f"{1 / median:,.1f} /s",
                f"{1000 * median:.1f} ms",
            )
        candidates = len(packer.items(query))
    if url.startswith("sqlite"):
        concurrent = scratch / "concurrent.db"
        ExperienceStore.open(concurrent).close()
        steps = max(50, args.steps // 10)
        began = time.perf_counter()
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    WRITER,
                    f"sqlite:///{concurrent}",
                    str(list_ops()[0].task_path),
                    str(i),
                    str(steps),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            for i in range(args.writers)
        ]
        outputs = [w.communicate()[0] for w in workers]
        wall = time.perf_counter() - began
        loop = max(float(o.strip() or 0) for o in outputs)
        with ExperienceStore.open(concurrent) as shared:
            stored = shared.stats().decisions
        expected = steps * args.writers
        table.add_row(
            f"{args.writers} processes writing one SQLite file (WAL)",
            f"{expected / loop:,.0f} /s in all",
            f"{stored}/{expected} steps kept; {wall:.1f} s with start-up",
        )
    console.print(table)
    console.print(f"packer candidates per prompt: {candidates}")


if __name__ == "__main__":
    main()
