"""How well the integrity gates catch cheats, how often they accuse honest kernels, what they cost.

  1. every fixture of the adversarial corpus (tests/fixtures/adversarial/manifest.json): is its
     intended rule among the findings, with the intended severity? A table per rule.
  2. false positives: reject findings on legitimate kernels (the operator suite, the good fixtures,
     and the near-miss corpus, whose kernels are wrong but honest).
  3. the time the gates add to one evaluation: the whole suite evaluated with and without them,
     interleaved in one run with a warm reference cache, as a ratio.

Usage: .venv/bin/python benchmarks/integrity.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.evaluate import EvalOptions, Evaluator
from kope.ops import get_op, list_ops

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


def corpus(evaluator: Evaluator) -> tuple[dict[str, list[bool]], list[str]]:
    caught: dict[str, list[bool]] = defaultdict(list)
    missed: list[str] = []
    for item in json.loads((FIXTURES / "adversarial" / "manifest.json").read_text()):
        result = evaluator.evaluate(ROOT / item["task"], FIXTURES / "adversarial" / item["file"])
        hit = any(f.rule == item["rule"] and f.severity == item["severity"] for f in result.integrity.findings)
        caught[item["rule"]].append(hit)
        if not hit:
            missed.append(f"{item['file']} ({item['rule']}): status {result.status}")
    return caught, missed


def legitimate() -> list[tuple[str, Path, Path]]:
    kernels = [(f"suite/{op.name}", op.task_path, op.kernel_path) for op in list_ops()]
    kernels.append(("good/scale", FIXTURES / "tasks" / "scale.py", FIXTURES / "good" / "scale.py"))
    for item in json.loads((FIXTURES / "near_miss" / "manifest.json").read_text()):
        op = get_op(item["op"])
        kernels.append((f"near_miss/{item['file']}", op.task_path, FIXTURES / "near_miss" / item["file"]))
    return kernels


def false_positives(evaluator: Evaluator) -> tuple[int, int, list[str]]:
    flagged: list[str] = []
    kernels = legitimate()
    for name, task, kernel in kernels:
        result = evaluator.evaluate(task, kernel)
        rejects = [f"{f.rule}: {f.message}" for f in result.integrity.findings if f.severity == "reject"]
        if rejects:
            flagged.append(f"{name}: {'; '.join(rejects)}")
    return len(flagged), len(kernels), flagged


def overhead(evaluator: Evaluator, rounds: int) -> tuple[float, float]:
    ops = list_ops()
    with_gates, without = EvalOptions(integrity=True), EvalOptions(integrity=False)
    for op in ops:  # warm the reference cache
        evaluator.evaluate(op.task_path, op.kernel_path, options=without)
    totals = {True: 0.0, False: 0.0}
    for round_ in range(rounds):
        for op in ops:
            order = (True, False) if (round_ + len(op.name)) % 2 else (False, True)
            for gates in order:
                began = time.perf_counter()
                evaluator.evaluate(op.task_path, op.kernel_path, options=with_gates if gates else without)
                totals[gates] += time.perf_counter() - began
    count = rounds * len(ops)
    return totals[True] / count, totals[False] / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    console = Console()
    console.print(f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
                  f"{time.strftime('%Y-%m-%d')}, device cpu (Triton interpreter)")
    with tempfile.TemporaryDirectory() as cache, Evaluator(cache_dir=Path(cache)) as evaluator:
        caught, missed = corpus(evaluator)
        table = Table(title="adversarial corpus: caught by the intended rule")
        for column in ("rule", "caught", "total"):
            table.add_column(column, justify="left" if column == "rule" else "right")
        for rule in sorted(caught):
            table.add_row(rule, str(sum(caught[rule])), str(len(caught[rule])))
        table.add_row("all", str(sum(sum(v) for v in caught.values())), str(sum(len(v) for v in caught.values())))
        console.print(table)
        for line in missed:
            console.print(f"  missed: {line}")

        flagged, total, which = false_positives(evaluator)
        console.print(f"false positives (reject findings on legitimate kernels): {flagged} / {total}")
        for line in which:
            console.print(f"  {line}")

        gated, plain = overhead(evaluator, args.rounds)
        cost = Table(title=f"time per evaluation over the suite ({args.rounds} rounds, 3 trials, warm cache)")
        for column in ("gates", "seconds / evaluation", "ratio"):
            cost.add_column(column, justify="right")
        cost.add_row("off", f"{plain:.3f}", "1.00")
        cost.add_row("on", f"{gated:.3f}", f"{gated / plain:.2f}")
        console.print(cost)


if __name__ == "__main__":
    main()
