"""Evaluation throughput and the fixed cost of one candidate evaluation.

Measures, in one run on this machine:
  1. a fresh interpreter that imports torch and triton (what a naive sandbox pays per candidate);
  2. the fixed cost of one evaluation through kope's fork server: a tiny kernel, one case, one
     trial, reference already cached; split into job set-up, the sandboxed run (fork, load, run,
     clean-up) and the comparison;
  3. the same evaluation with a fresh interpreter per job (`runner="spawn"`);
  4. evaluations per minute over the built-in suite (every case, 3 trials), cold and warm cache.

Usage: .venv/bin/python benchmarks/eval_throughput.py [--repeat N] [--skip-suite]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.runner import Runner
from kope.evaluate.sandbox import Outcome, SandboxLimits
from kope.ops import list_ops

ROOT = Path(__file__).resolve().parents[1]
TASK = ROOT / "tests" / "fixtures" / "tasks" / "scale.py"
KERNEL = ROOT / "tests" / "fixtures" / "good" / "scale.py"


class TimedRunner:
    """Wraps a runner and records the wall time of each job and the worker's own lifetime."""

    def __init__(self, inner: Runner) -> None:
        self.inner = inner
        self.jobs: list[tuple[float, float]] = []

    def run(self, job_dir: Path, limits: SandboxLimits) -> Outcome:
        began = time.perf_counter()
        outcome = self.inner.run(job_dir, limits)
        self.jobs.append((time.perf_counter() - began, outcome.seconds))
        return outcome

    def close(self) -> None:
        self.inner.close()


def interpreter_start(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch, triton, triton.language"], check=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def fixed_cost(runner_kind: str, repeat: int) -> dict[str, float]:
    from kope.evaluate.runner import ForkServer, SpawnRunner

    inner: Runner = ForkServer().start() if runner_kind == "fork" else SpawnRunner()
    timed = TimedRunner(inner)
    options = EvalOptions(trials=1)
    with tempfile.TemporaryDirectory() as cache, Evaluator(runner=timed, cache_dir=Path(cache)) as evaluator:
        evaluator.evaluate(TASK, KERNEL, options=options, which="visible")
        totals, jobs, workers = [], [], []
        for _ in range(repeat):
            timed.jobs.clear()
            began = time.perf_counter()
            result = evaluator.evaluate(TASK, KERNEL, options=options, which="visible")
            totals.append(time.perf_counter() - began)
            assert result.status == "pass", result
            ((job, worker),) = timed.jobs
            jobs.append(job)
            workers.append(worker)
    timed.close()
    total, job, worker = statistics.median(totals), statistics.median(jobs), statistics.median(workers)
    return {"total": total, "job": job, "worker": worker, "outside_job": total - job, "supervision": job - worker}


def suite_rate() -> tuple[float, float, int, int]:
    ops = list_ops()
    options = EvalOptions(trials=3)
    with tempfile.TemporaryDirectory() as cache, Evaluator(cache_dir=Path(cache)) as evaluator:
        evaluator.evaluate(TASK, KERNEL, options=EvalOptions(trials=1), which="visible")  # start the server
        rates = []
        for _ in range(2):  # cold cache, then warm
            began = time.perf_counter()
            cases = 0
            for op in ops:
                result = evaluator.evaluate(op.task_path, op.kernel_path, options=options)
                assert result.status == "pass", (op.name, result.error)
                cases += len(result.cases)
            rates.append(len(ops) / ((time.perf_counter() - began) / 60))
    return rates[0], rates[1], len(ops), cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--skip-suite", action="store_true")
    args = parser.parse_args()
    console = Console()
    console.print(
        f"machine: {platform.node()}, {platform.processor() or platform.machine()}, "
        f"python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )

    start = interpreter_start(args.repeat)
    fork = fixed_cost("fork", args.repeat)
    spawn = fixed_cost("spawn", max(3, args.repeat // 2))

    table = Table(title="fixed cost of one evaluation (tiny kernel, 1 case, 1 trial, reference cached)")
    for column in ("what", "median s", "vs interpreter start"):
        table.add_column(column, justify="right" if column != "what" else "left")
    table.add_row("fresh interpreter importing torch + triton", f"{start:.3f}", "1.00")
    for label, value in (
        ("kope evaluation, fork server (total)", fork["total"]),
        ("  sandboxed job: fork, load, run, clean-up", fork["job"]),
        ("    of which the worker process lived", fork["worker"]),
        ("    supervision (fork, kill sweep, outcome)", fork["supervision"]),
        ("  outside the job: set-up, comparison", fork["outside_job"]),
        ("kope evaluation, fresh interpreter per job", spawn["total"]),
    ):
        table.add_row(label, f"{value:.3f}", f"{value / start:.2f}")
    console.print(table)
    verdict = "met" if fork["total"] <= start / 2 else "NOT met"
    console.print(f"target (fixed cost <= half an interpreter start): {verdict}")

    if not args.skip_suite:
        cold, warm, ops, cases = suite_rate()
        suite = Table(title=f"built-in suite: {ops} operators, {cases} cases, 3 trials each, CPU interpreter")
        suite.add_column("reference cache")
        suite.add_column("evaluations / minute", justify="right")
        suite.add_column("seconds / evaluation", justify="right")
        suite.add_row("cold", f"{cold:.1f}", f"{60 / cold:.2f}")
        suite.add_row("warm", f"{warm:.1f}", f"{60 / warm:.2f}")
        console.print(suite)


if __name__ == "__main__":
    main()
