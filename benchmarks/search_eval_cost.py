"""What one candidate costs the search against what one edit costs the recipe loop.

The recipe loop evaluates each edit with a full diagnosis (every visible case with three trials and
the gates, then the probes: bounds checker, determinism, size sweep, structured inputs, layout). The
search evaluates a candidate with one trial on the shown case, no gates, the reference cached, a
batch of candidates at a time in parallel sandboxed jobs. This script takes the first N candidates
the search would try on one near miss and times them all three ways, in one run.

Usage: .venv/bin/python benchmarks/search_eval_cost.py [--op softmax] [--candidate PATH] [-n 6]
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.cases.task import load_task
from kope.diagnose.diagnoser import Diagnoser
from kope.evaluate import EvalOptions, Evaluator
from kope.ops import get_op
from kope.repair.search import RepairSearch

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", default="softmax")
    parser.add_argument("--candidate", type=Path, default=ROOT / "src/kope/corpora/fixtures/softmax_pad_other_zero.py")
    parser.add_argument("-n", type=int, default=6)
    args = parser.parse_args()
    console = Console()
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, cpu (Triton interpreter); {args.candidate.name}, {args.n} candidates"
    )
    task = load_task(get_op(args.op).task_path)
    with Evaluator(max_parallel=2) as evaluator, tempfile.TemporaryDirectory() as scratch:
        cases = evaluator.cases(task)
        visible = [c for c in cases if c.visible]
        diagnoser = Diagnoser(evaluator)
        start = diagnoser.diagnose(task, args.candidate, cases=visible)
        candidates = RepairSearch(evaluator).candidates(args.candidate.read_text(), start, task.source)[: args.n]
        paths = []
        for i, candidate in enumerate(candidates):
            path = Path(scratch) / f"variant_{i}.py"
            path.write_text(candidate.source)
            paths.append(path)
        quick = EvalOptions(trials=1, integrity=False)
        evaluator.evaluate(task, paths[0], options=quick, cases=visible)  # warm the fork server and the reference
        rows = []
        began = time.monotonic()
        for path in paths:
            diagnoser.diagnose(task, path, cases=visible)
        rows.append(("recipe loop: a full diagnosis per edit", time.monotonic() - began))
        began = time.monotonic()
        for path in paths:
            evaluator.evaluate(task, path, options=quick, cases=visible)
        rows.append(("search: one trial, shown case, no gates, one at a time", time.monotonic() - began))
        began = time.monotonic()
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda p: evaluator.evaluate(task, p, options=quick, cases=visible), paths))
        rows.append(("search: the same, batches of 2 in parallel (the default)", time.monotonic() - began))
    table = Table(title=f"cost of evaluating {len(paths)} candidates")
    for column in ("how", "total s", "s per candidate", "vs the recipe loop"):
        table.add_column(column, justify="left" if column == "how" else "right")
    base = rows[0][1]
    for how, seconds in rows:
        table.add_row(how, f"{seconds:.1f}", f"{seconds / len(paths):.2f}", f"{seconds / base:.2f}x")
    console.print(table)


if __name__ == "__main__":
    main()
