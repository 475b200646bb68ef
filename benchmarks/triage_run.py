"""The triage of a 100-candidate run made from the suite: classes before and after, and the time it took.

The run (`kope.triage.sample`, the tasks given smaller cases for the interpreter) has, per problem,
its correct kernel twice, the suite's near misses for it, two broken kernels and a cheat, trimmed to
N candidates. It is triaged with the offline recipes on the local executor.

Usage: .venv/bin/python benchmarks/triage_run.py [--candidates 100] [--workers 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.evaluate import EvalOptions
from kope.executors import LocalExecutor
from kope.triage import CLASSES, triage
from kope.triage.sample import make_run

OPS = (
    "relu",
    "sigmoid",
    "silu",
    "leaky_relu",
    "gelu_tanh",
    "bias_add",
    "softmax",
    "row_sum",
    "row_max",
    "row_mean",
    "log_softmax",
    "argmax",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="Keep the results here (default: a temporary folder).")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory()
    root = args.out or Path(scratch.name)
    run = make_run(root / "run", ops=OPS, good=2, near_misses=5, broken=2, cheats=1, small=True)
    # trim to N: drop near misses from the problems that have the most, last sample first
    expected = dict(run.expected)
    while len(expected) > args.candidates:
        by_problem: dict[str, list[str]] = {}
        for ident, kind in expected.items():
            if kind == "near-miss":
                by_problem.setdefault(ident.split("/")[1], []).append(ident)
        victim = sorted(max(by_problem.values(), key=len))[-1]
        (run.candidates / victim).unlink()
        del expected[victim]
    began = time.monotonic()
    summary = triage(
        run.tasks,
        run.candidates,
        root / "out",
        executor=LocalExecutor(args.workers),
        options=EvalOptions(trials=1),
        cache_dir=root / "cache",
    )
    seconds = time.monotonic() - began
    wrong = sum(expected[r.id] != r.before for r in summary.rows)
    table = Table(
        title=f"triage of {len(summary.rows)} candidates in {len(set(r.problem for r in summary.rows))} "
        f"problems, {args.workers} workers: {seconds:.0f} s ({60 * len(summary.rows) / seconds:.1f}/min)"
    )
    table.add_column("class")
    for name in (*CLASSES, "error"):
        table.add_column(name, justify="right")
    for when in ("before", "after"):
        counts = summary.counts(when)
        table.add_row(when, *[str(counts[name]) for name in (*CLASSES, "error")])
    Console().print(table)
    near = [r for r in summary.rows if r.before == "near-miss"]
    print(
        f"pass rate {summary.pass_rate('before'):.1%} -> {summary.pass_rate('after'):.1%}; "
        f"{summary.saved}/{len(near)} near misses saved; tokens {summary.tokens}; "
        f"repair time {sum(r.repair_s for r in summary.rows):.0f} s in all; "
        f"classes other than expected before repair: {wrong}; report: {summary.out / 'report.html'}"
    )
    stops: dict[str, int] = {}
    for row in near:
        stops[f"{row.repair}/{row.stop_reason}"] = stops.get(f"{row.repair}/{row.stop_reason}", 0) + 1
    print("repairs:", ", ".join(f"{k} {v}" for k, v in sorted(stops.items())))


if __name__ == "__main__":
    main()
