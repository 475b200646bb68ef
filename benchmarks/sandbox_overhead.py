"""What the OS sandbox costs: kope before the sandbox against kope with it, side by side in one run.

Three variants, measured in rounds that interleave them (so the machine's load falls on all alike):

  - `before`: the commit before the sandbox (`--before REV`, default the last commit without it),
    checked out into a temporary git worktree and imported from there with this virtualenv;
  - `sandbox auto`: this tree, default settings (the namespace level on a machine that allows it);
  - `sandbox off`: this tree, process isolation only.

For each: the fixed cost of one evaluation (tiny kernel, one case, one trial, reference cached;
median of `--repeat`), the time of a fresh interpreter importing torch and triton (the yardstick of
the 0.5x target), and evaluations per minute over the built-in suite with a warm reference cache.

Usage: .venv/bin/python benchmarks/sandbox_overhead.py [--repeat N] [--rounds N] [--before REV] [--ops N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_throughput import interpreter_start

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "31b3dc2"

_MEASURE = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
from kope.evaluate import EvalOptions, Evaluator
from kope.ops import list_ops

root, repeat, ops_count, mode = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
extra = {} if mode == "none" else {"sandbox": mode}
task, kernel = root / "tests/fixtures/tasks/scale.py", root / "tests/fixtures/good/scale.py"
with tempfile.TemporaryDirectory() as cache, Evaluator(cache_dir=Path(cache)) as evaluator:
    one = EvalOptions(trials=1, **extra)
    evaluator.evaluate(task, kernel, options=one, which="visible")
    fixed = []
    for _ in range(repeat):
        began = time.perf_counter()
        result = evaluator.evaluate(task, kernel, options=one, which="visible")
        fixed.append(time.perf_counter() - began)
        assert result.status == "pass", result
    ops = list_ops()[:ops_count]
    full = EvalOptions(trials=3, **extra)
    for op in ops:
        evaluator.evaluate(op.task_path, op.kernel_path, options=full)
    began = time.perf_counter()
    for op in ops:
        result = evaluator.evaluate(op.task_path, op.kernel_path, options=full)
        assert result.status == "pass", (op.name, result.error)
    rate = len(ops) / ((time.perf_counter() - began) / 60)
    level = getattr(result, "sandbox", None)
print(json.dumps({"fixed": statistics.median(fixed), "rate": rate, "level": level.level if level else "none"}))
"""


def _measure(source_root: Path, mode: str, repeat: int, ops: int) -> dict[str, float | str]:
    env = {**os.environ, "PYTHONPATH": str(source_root / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ROOT), str(repeat), str(ops), mode],
        capture_output=True, text=True, env=env, check=False, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"measurement failed ({source_root}, {mode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ops", type=int, default=24, help="How many suite operators the throughput uses.")
    parser.add_argument("--before", default=BEFORE, help="The commit before the sandbox.")
    args = parser.parse_args()
    console = Console()
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        before = Path(scratch) / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.before], check=True
        )
        try:
            variants = {"before": (before, "none"), "sandbox auto": (ROOT, "auto"), "sandbox off": (ROOT, "off")}
            runs: dict[str, list[dict[str, float | str]]] = {name: [] for name in variants}
            starts = []
            for round_ in range(args.rounds):
                starts.append(interpreter_start(3))
                for name, (source, mode) in variants.items():
                    console.print(f"round {round_ + 1}/{args.rounds}: {name}", style="dim")
                    runs[name].append(_measure(source, mode, args.repeat, args.ops))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False)
    start = statistics.median(starts)
    base = runs["before"]
    base_fixed = statistics.median(float(r["fixed"]) for r in base)
    base_rate = statistics.median(float(r["rate"]) for r in base)
    table = Table(
        title=f"sandbox overhead ({args.rounds} interleaved rounds; suite: {args.ops} operators, 3 trials, warm cache)"
    )
    for column in ("variant", "level", "fixed cost s", "vs interpreter start", "vs before", "evals / min", "vs before"):
        table.add_column(column, justify="left" if column in ("variant", "level") else "right")
    for name, measured in runs.items():
        fixed = statistics.median(float(r["fixed"]) for r in measured)
        rate = statistics.median(float(r["rate"]) for r in measured)
        table.add_row(
            name,
            str(measured[-1]["level"]),
            f"{fixed:.3f}",
            f"{fixed / start:.3f}",
            f"{fixed / base_fixed:.2f}",
            f"{rate:.1f}",
            f"{rate / base_rate:.2f}",
        )
    console.print(table)
    console.print(f"fresh interpreter importing torch + triton: {start:.3f} s (median)")
    auto = runs["sandbox auto"]
    fixed_ok = statistics.median(float(r["fixed"]) for r in auto) <= start / 2
    rate_ok = statistics.median(float(r["rate"]) for r in auto) >= 0.85 * base_rate
    console.print(
        f"targets: fixed cost <= 0.5x interpreter start: {'met' if fixed_ok else 'NOT met'}; "
        f"suite throughput within 15% of before: {'met' if rate_ok else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
