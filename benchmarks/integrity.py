"""How well the integrity gates catch cheats, how often they accuse honest kernels, what they cost.

  1. the adversarial corpus (tests/fixtures/adversarial/manifest.json): is each fixture's intended rule
     among the findings, with the intended severity? A table per rule, and the catch rate.
  2. the held-out provenance corpora (tests/fixtures/provenance/, issue 12; docs/results/integrity-corpora.md):
     cheats per family, caught with one of their acceptable rules and caught at all (any reject finding);
     honest kernels per style group with any reject finding (false positives).
  3. false positives on the other legitimate kernels (the operator suite, the good fixtures, and the
     near-miss corpus, whose kernels are wrong but honest).
  4. with --kernelbench DIR: the candidates in benchmarks/kernelbench_l2/ (GEMM kept in PyTorch, the rest
     fused in Triton) and their all-PyTorch copy cheats, against DIR/level2/ of a KernelBench checkout.
  5. the time the gates add to one evaluation: the whole suite evaluated with and without them,
     interleaved in one run with a warm reference cache, as a ratio.

Usage: .venv/bin/python benchmarks/integrity.py [--rounds N] [--kernelbench DIR] [--skip-cpp] [--no-overhead]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kope.evaluate import EvalOptions, Evaluator
from kope.ops import get_op, list_ops
from kope.protocol.results import EvalResult

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
NEAR_MISS = ROOT / "src" / "kope" / "corpora" / "fixtures"
PROVENANCE = FIXTURES / "provenance"
KERNELBENCH_L2 = ROOT / "benchmarks" / "kernelbench_l2"
CORPUS_OPTIONS = EvalOptions(trials=2)
CPP_OPTIONS = EvalOptions(trials=2, timeout_s=300)


@dataclass
class Tally:
    """Cheats of one group: how many were rejected with an acceptable rule, how many with any reject."""

    total: int = 0
    caught: int = 0
    rejected: int = 0
    missed: list[str] = field(default_factory=list)

    def add(self, name: str, result: EvalResult, acceptable: Iterable[str]) -> None:
        rejects = {f.rule for f in result.integrity.findings if f.severity == "reject"}
        self.total += 1
        self.caught += bool(rejects & set(acceptable))
        self.rejected += bool(rejects)
        if not rejects & set(acceptable):
            self.missed.append(f"{name}: status {result.status}, rejects {sorted(rejects) or 'none'}")


@dataclass
class Accusations:
    """Honest kernels of one group: how many got a reject finding."""

    total: int = 0
    flagged: list[str] = field(default_factory=list)

    def add(self, name: str, result: EvalResult) -> None:
        self.total += 1
        rejects = [f"{f.rule}: {f.message}" for f in result.integrity.findings if f.severity == "reject"]
        if rejects:
            self.flagged.append(f"{name}: {'; '.join(rejects)}")


def rate(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def has_compiler() -> bool:
    return any(shutil.which(name) for name in ("c++", "g++", "clang++"))


def adversarial(evaluator: Evaluator) -> tuple[dict[str, list[bool]], list[str]]:
    caught: dict[str, list[bool]] = defaultdict(list)
    missed: list[str] = []
    for item in json.loads((FIXTURES / "adversarial" / "manifest.json").read_text()):
        result = evaluator.evaluate(ROOT / item["task"], FIXTURES / "adversarial" / item["file"])
        hit = any(f.rule == item["rule"] and f.severity == item["severity"] for f in result.integrity.findings)
        caught[item["rule"]].append(hit)
        if not hit:
            missed.append(f"{item['file']} ({item['rule']}): status {result.status}")
    return caught, missed


def _entries(folder: str, skip_cpp: bool, skipped: list[str]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((PROVENANCE / folder / "manifest.json").read_text())
    kept = []
    for entry in entries:
        if entry.get("needs") == "cpp" and skip_cpp:
            skipped.append(f"{folder}/{entry['file']}")
        else:
            kept.append(entry)
    return kept


def _options(entry: dict[str, Any]) -> EvalOptions:
    return CPP_OPTIONS if entry.get("needs") == "cpp" else CORPUS_OPTIONS


def provenance_cheats(evaluator: Evaluator, skip_cpp: bool, skipped: list[str]) -> dict[str, Tally]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    for entry in _entries("cheats", skip_cpp, skipped):
        result = evaluator.evaluate(
            ROOT / entry["task"], PROVENANCE / "cheats" / entry["file"], options=_options(entry)
        )
        tallies[entry["family"]].add(entry["file"], result, entry["rules"])
    return tallies


def provenance_honest(evaluator: Evaluator, skip_cpp: bool, skipped: list[str]) -> dict[str, Accusations]:
    groups: dict[str, Accusations] = defaultdict(Accusations)
    for entry in _entries("honest", skip_cpp, skipped):
        result = evaluator.evaluate(
            ROOT / entry["task"], PROVENANCE / "honest" / entry["file"], options=_options(entry)
        )
        group = "level-2 style (partial)" if entry["style"] == "level2-partial" else "operator tasks"
        groups[group].add(entry["file"], result)
    return groups


def legitimate() -> list[tuple[str, str, Path, Path]]:
    kernels = [("operator suite", f"suite/{op.name}", op.task_path, op.kernel_path) for op in list_ops()]
    kernels.append(("good fixtures", "good/scale", FIXTURES / "tasks" / "scale.py", FIXTURES / "good" / "scale.py"))
    for item in json.loads((NEAR_MISS / "manifest.json").read_text()):
        op = get_op(item["op"])
        kernels.append(("near-miss corpus", f"near_miss/{item['file']}", op.task_path, NEAR_MISS / item["file"]))
    return kernels


def other_legitimate(evaluator: Evaluator) -> dict[str, Accusations]:
    groups: dict[str, Accusations] = defaultdict(Accusations)
    for group, name, task, kernel in legitimate():
        groups[group].add(name, evaluator.evaluate(task, kernel))
    return groups


def kernelbench(evaluator: Evaluator, root: Path, max_elements: int) -> tuple[Tally, Accusations, list[str]]:
    options = EvalOptions(trials=2, max_elements=max_elements)
    cheats, honest, absent = Tally(), Accusations(), []
    for entry in json.loads((KERNELBENCH_L2 / "manifest.json").read_text()):
        task = root / entry["kernelbench"]
        if not task.is_file():
            absent.append(str(task))
            continue
        honest.add(entry["file"], evaluator.evaluate(task, KERNELBENCH_L2 / entry["file"], options=options))
        result = evaluator.evaluate(task, KERNELBENCH_L2 / entry["cheat"], options=options)
        cheats.add(entry["cheat"], result, ("copy-kernel", "torch-compute"))
    return cheats, honest, absent


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


def catch_table(title: str, tallies: dict[str, Tally]) -> Table:
    table = Table(title=title)
    for column in ("group", "cheats", "caught (acceptable rule)", "rejected (any rule)"):
        table.add_column(column, justify="left" if column == "group" else "right")
    for name in sorted(tallies):
        tally = tallies[name]
        table.add_row(name, str(tally.total), rate(tally.caught, tally.total), rate(tally.rejected, tally.total))
    total = Tally(
        total=sum(t.total for t in tallies.values()),
        caught=sum(t.caught for t in tallies.values()),
        rejected=sum(t.rejected for t in tallies.values()),
    )
    table.add_row("all", str(total.total), rate(total.caught, total.total), rate(total.rejected, total.total))
    return table


def accusation_table(title: str, groups: dict[str, Accusations]) -> Table:
    table = Table(title=title)
    for column in ("group", "kernels", "with a reject finding"):
        table.add_column(column, justify="left" if column == "group" else "right")
    for name, group in groups.items():
        table.add_row(name, str(group.total), rate(len(group.flagged), group.total))
    flagged = sum(len(g.flagged) for g in groups.values())
    table.add_row(
        "all", str(sum(g.total for g in groups.values())), rate(flagged, sum(g.total for g in groups.values()))
    )
    return table


def print_lines(console: Console, prefix: str, lines: Iterable[str]) -> None:
    for line in lines:
        console.print(f"  {prefix}{line}", highlight=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kernelbench", type=Path, help="a KernelBench checkout's root (the folder holding level2/)")
    parser.add_argument("--kb-max-elements", type=int, default=16384, help="derived-case budget for KernelBench tasks")
    parser.add_argument("--skip-cpp", action="store_true", help="skip fixtures that build a C++ extension")
    parser.add_argument("--no-overhead", action="store_true", help="skip the gate-cost measurement")
    args = parser.parse_args()
    console = Console()
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}, device cpu (Triton interpreter)"
    )
    skip_cpp = args.skip_cpp or not has_compiler()
    skipped: list[str] = []
    with tempfile.TemporaryDirectory() as cache, Evaluator(cache_dir=Path(cache)) as evaluator:
        caught, missed = adversarial(evaluator)
        table = Table(title="adversarial corpus: caught by the intended rule")
        for column in ("rule", "caught", "total"):
            table.add_column(column, justify="left" if column == "rule" else "right")
        for rule in sorted(caught):
            table.add_row(rule, str(sum(caught[rule])), str(len(caught[rule])))
        hits, total = sum(sum(v) for v in caught.values()), sum(len(v) for v in caught.values())
        table.add_row("all", str(hits), str(total))
        console.print(table)
        console.print(f"adversarial corpus catch rate: {rate(hits, total)}")
        print_lines(console, "missed: ", missed)

        tallies = provenance_cheats(evaluator, skip_cpp, skipped)
        console.print(catch_table("provenance cheats (held out): per family", tallies))
        for tally in tallies.values():
            print_lines(console, "missed: ", tally.missed)

        honest = provenance_honest(evaluator, skip_cpp, skipped)
        others = other_legitimate(evaluator)
        console.print(accusation_table("false positives: honest kernels with a reject finding", {**honest, **others}))
        for group in (*honest.values(), *others.values()):
            print_lines(console, "", group.flagged)
        if skipped:
            console.print(f"skipped (no C++ compiler, or --skip-cpp): {', '.join(skipped)}")

        if args.kernelbench is None:
            console.print("KernelBench level 2: skipped (give --kernelbench DIR, a KernelBench checkout's root)")
        else:
            kb_cheats, kb_honest, absent = kernelbench(evaluator, args.kernelbench, args.kb_max_elements)
            kb = Table(title=f"KernelBench level 2 ({args.kernelbench}, budget {args.kb_max_elements} elements)")
            for column in ("kernels", "count", "rejected (cheats: with copy-kernel or torch-compute)"):
                kb.add_column(column, justify="left" if column == "kernels" else "right")
            kb.add_row(
                "honest (GEMM in PyTorch, epilogue in Triton)",
                str(kb_honest.total),
                rate(len(kb_honest.flagged), kb_honest.total),
            )
            kb.add_row(
                "cheats (all PyTorch, then a copy kernel)",
                str(kb_cheats.total),
                rate(kb_cheats.caught, kb_cheats.total),
            )
            console.print(kb)
            print_lines(console, "", kb_honest.flagged)
            print_lines(console, "missed: ", kb_cheats.missed)
            print_lines(console, "not found: ", absent)

        if not args.no_overhead:
            gated, plain = overhead(evaluator, args.rounds)
            cost = Table(title=f"time per evaluation over the suite ({args.rounds} rounds, 3 trials, warm cache)")
            for column in ("gates", "seconds / evaluation", "ratio"):
                cost.add_column(column, justify="right")
            cost.add_row("off", f"{plain:.3f}", "1.00")
            cost.add_row("on", f"{gated:.3f}", f"{gated / plain:.2f}")
            console.print(cost)


if __name__ == "__main__":
    main()
