"""Where one evaluation's time goes, stage by stage, for this tree and a commit before it, side by side.

The test suite is mostly evaluations (issue 16: pytest at most ~260 s on a 2-core machine), so this splits
one real, sandboxed evaluation into what the parent sees:

  - `server`: starting the fork server (once per Evaluator: imports torch, triton, numpy, kope's worker);
  - `plan`, `reference`, `candidate`: the sandboxed jobs of each kind, summed over cases (wall seconds of
    `Runner.run`; cases run two at a time, so these add up to more than the evaluation's wall time);
  - `compare`: the parent's comparison of outputs; `gates`: the integrity verdict (`gate.assess`);
  - `cold`: a whole evaluation with an empty reference cache; `warm`: the same again (references cached);
  - `no gates`: warm, `integrity=False` (what the in-process monitor and the probes cost);
  - `bounds`: warm, `bounds_check=True` (what the bounds checker costs, when diagnosis asks for it).

Each variant runs in its own process (`PYTHONPATH` pointing at its `src/`), in rounds that interleave the
variants so the machine's load falls on all alike; the table gives medians and this tree's ratio to
`before`. `before` is `git archive REV src` unpacked in a temporary directory.

Usage: .venv/bin/python benchmarks/eval_stages.py [--before REV] [--rounds N] [--trials N]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "d8aa1a0"
"""main before issue 16's speed work (the arch merge)."""
HONEST = "tests/fixtures/provenance/honest"
FIXTURES = {
    "softmax_three_kernels": ("src/kope/ops/softmax/task.py", f"{HONEST}/softmax_three_kernels.py"),
    "conv1d_direct": ("src/kope/ops/conv1d/task.py", f"{HONEST}/conv1d_direct_module_params.py"),
    "suite layernorm": ("src/kope/ops/layernorm/task.py", "src/kope/ops/layernorm/kernel.py"),
}
STAGES = ("server", "plan", "reference", "candidate", "compare", "gates", "cold", "warm", "no gates", "bounds")

_MEASURE = r"""
import dataclasses, json, sys, tempfile, time
from collections import defaultdict
from pathlib import Path
from kope.evaluate import EvalOptions, Evaluator, compare, evaluator as evaluator_module
from kope.integrity import gate

root, task, candidate, trials = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
seconds = defaultdict(float)

def timed(owner, name, stage):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            seconds[stage] += time.perf_counter() - began
    setattr(owner, name, wrapper)

timed(compare, "compare_outputs", "compare")
timed(gate, "assess", "gates")
with tempfile.TemporaryDirectory() as cache, Evaluator(cache_dir=Path(cache)) as evaluator:
    began = time.perf_counter()
    runner = evaluator.runner
    seconds["server"] = time.perf_counter() - began
    original_run = runner.run
    def run(job_dir, limits):
        mode = json.loads((Path(job_dir) / "spec.json").read_text())["mode"]
        began = time.perf_counter()
        try:
            return original_run(job_dir, limits)
        finally:
            seconds[mode] += time.perf_counter() - began
    runner.run = run
    options = EvalOptions(trials=trials, timeout_s=300)
    def evaluate(stage, **changes):
        began = time.perf_counter()
        result = evaluator.evaluate(root / task, root / candidate, options=dataclasses.replace(options, **changes))
        assert result.status == "pass", (stage, result.status, result.error)
        return time.perf_counter() - began
    seconds["cold"] = evaluate("cold")
    jobs = dict(seconds)
    seconds["warm"] = evaluate("warm")
    seconds["no gates"] = evaluate("no gates", integrity=False)
    seconds["bounds"] = evaluate("bounds", bounds_check=True)
print(json.dumps({**seconds, **{k: jobs.get(k, 0.0) for k in ("plan", "reference", "candidate", "compare", "gates")}}))
"""


def _measure(source: Path, task: str, candidate: str, trials: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ROOT), task, candidate, str(trials)],
        capture_output=True, text=True, env=env, check=False, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"measurement failed ({source}, {candidate}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _unpack(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=BEFORE, help="The commit to compare with.")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--trials", type=int, default=2, help="Trials per case (the provenance corpus uses 2).")
    parser.add_argument("--fixture", action="append", choices=sorted(FIXTURES), help="Default: all.")
    args = parser.parse_args()
    console = Console()
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    names = args.fixture or list(FIXTURES)
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        before = Path(scratch)
        _unpack(args.before, before)
        variants = {"before": before, "this tree": ROOT}
        for round_ in range(args.rounds):
            for name in names:
                for variant, source in variants.items():
                    console.print(f"round {round_ + 1}/{args.rounds}: {name}, {variant}", style="dim")
                    runs.setdefault((name, variant), []).append(_measure(source, *FIXTURES[name], args.trials))
    for name in names:
        table = Table(title=f"{name}: seconds per stage (median of {args.rounds}; {args.trials} trials per case)")
        for column in ("stage", "before", "this tree", "ratio"):
            table.add_column(column, justify="left" if column == "stage" else "right")
        for stage in STAGES:
            old = statistics.median(r.get(stage, 0.0) for r in runs[(name, "before")])
            new = statistics.median(r.get(stage, 0.0) for r in runs[(name, "this tree")])
            table.add_row(stage, f"{old:.2f}", f"{new:.2f}", f"{new / old:.2f}" if old else "-")
        console.print(table)


if __name__ == "__main__":
    main()
