"""Derived cases on a directory of KernelBench-format task files (KernelBench's levels 1, 2 and 3).

For every task file: the time derivation takes (its plan job included; the fork server is started
before timing), the sandboxed jobs it ran, how many cases it keeps, how many distinct sizes they
cover, and why it fails where it does (a file no case of which fits is `too-large`: kope eval refuses
to run it, with the option that would make it fit; a file where only the batch could be varied is
counted too). Summary: the fraction of files with at least 3 valid cases
(and with at least 3 distinct sizes), the time per file, the files where derivation fails.

Usage: .venv/bin/python benchmarks/derive_kernelbench.py DIRECTORY [--device cpu] [--max-elements N]
       [--limit N] [--json FILE]

The task files are read where they are; nothing is copied into the repository.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.cases.derivation import distinct_shapes
from kope.cases.sizes import default_max_elements
from kope.cases.task import load_task
from kope.errors import KopeError
from kope.evaluate import EvalOptions, Evaluator


@dataclass
class Row:
    file: str
    seconds: float
    kept: int = 0
    shapes: int = 0
    jobs: int = 0
    probe: str = "-"
    base: str = "-"
    sizing: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    original_elements: int = 0
    too_large: str | None = None
    batch_only: bool = False
    error: str | None = None


def _order(path: Path) -> tuple[int, str]:
    match = re.match(r"(\d+)_", path.name)
    return (int(match.group(1)) if match else 1 << 30, path.name)


def derive_one(evaluator: Evaluator, path: Path, options: EvalOptions) -> Row:
    began = time.perf_counter()
    try:
        derivation = evaluator.derivation(load_task(path), options)
    except KopeError as exc:
        return Row(file=path.name, seconds=time.perf_counter() - began, error=str(exc).splitlines()[0])
    kept = derivation.kept
    base = next((c for c in kept if c.visible), None)
    return Row(
        file=path.name,
        seconds=time.perf_counter() - began,
        kept=len(kept),
        shapes=distinct_shapes(kept),
        jobs=derivation.jobs + 1,
        probe=derivation.probe,
        base=base.kind if base else "-",
        sizing=[p.name for p in derivation.parameters if p.sizes_inputs],
        fixed=[p.name for p in derivation.parameters if not p.sizes_inputs],
        original_elements=max(derivation.original_numel or 0, derivation.original_output_numel or 0),
        too_large=derivation.too_large.text() if derivation.too_large else None,
        batch_only=any(note.startswith("only the batch") for note in derivation.notes),
        error=derivation.error,
    )


def per_file_table(rows: list[Row], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("file", "varied", "left alone", "original elements", "base", "kept", "sizes", "jobs", "s"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row.file[:44],
            ",".join(row.sizing)[:40],
            ",".join(row.fixed)[:30],
            f"{row.original_elements:.3g}",
            row.base,
            str(row.kept),
            str(row.shapes),
            str(row.jobs),
            f"{row.seconds:.2f}",
        )
    return table


def summary_table(rows: list[Row], budget: int) -> Table:
    seconds = [row.seconds for row in rows]
    three = sum(row.kept >= 3 for row in rows)
    three_sizes = sum(row.shapes >= 3 for row in rows)
    shrunk = sum(row.base == "shrunk" for row in rows)
    table = Table(title="summary", title_justify="left")
    table.add_column("measure")
    table.add_column("value")
    table.add_row("machine", f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    table.add_row("files", str(len(rows)))
    table.add_row("budget (elements of the inputs, or of the outputs)", str(budget))
    table.add_row("base case shrunk / original", f"{shrunk} / {sum(row.base == 'original' for row in rows)}")
    table.add_row(">= 3 valid cases", f"{three}/{len(rows)} ({three / len(rows):.0%})")
    table.add_row(">= 3 distinct sizes", f"{three_sizes}/{len(rows)} ({three_sizes / len(rows):.0%})")
    table.add_row(
        "kept cases per file: median / min",
        f"{statistics.median(r.kept for r in rows):g} / {min(r.kept for r in rows)}",
    )
    table.add_row(
        "seconds per file: median / mean / max",
        f"{statistics.median(seconds):.2f} / {statistics.fmean(seconds):.2f} / {max(seconds):.2f}",
    )
    table.add_row(
        "sandboxed jobs per file: median / max",
        f"{statistics.median(r.jobs for r in rows):g} / {max(r.jobs for r in rows)}",
    )
    table.add_row("no case derived", str(sum(row.kept == 0 for row in rows)))
    table.add_row("too-large (refused before running, with a fix)", str(sum(row.too_large is not None for row in rows)))
    table.add_row(
        "no case and not too-large (would run the task's own sizes)",
        str(sum(row.kept == 0 and row.too_large is None for row in rows)),
    )
    table.add_row("only the batch could be varied", str(sum(row.batch_only for row in rows)))
    return table


def report(console: Console, rows: list[Row], device: str, budget: int) -> None:
    console.print(per_file_table(rows, f"derived cases on {device}, budget {budget}"))
    console.print(summary_table(rows, budget))
    for row in rows:
        if row.error or row.kept < 3:
            console.print(f"  {row.file}: {row.kept} kept; {row.too_large or row.error or ''}", highlight=False)
        elif row.batch_only:
            console.print(f"  {row.file}: {row.kept} kept; only the batch could be varied", highlight=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-elements", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="only the first N files")
    parser.add_argument("--start", type=int, default=0, help="skip the first N files")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PREFIX",
        help="only the files whose name starts with PREFIX (repeatable: --only 35_ --only 38_)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the per-file rows as JSON")
    parser.add_argument(
        "--from-json",
        type=Path,
        default=None,
        help="print the tables of rows saved by an earlier run (--json), without deriving",
    )
    args = parser.parse_args(argv)
    budget = args.max_elements or default_max_elements(args.device)
    if args.from_json is not None:
        saved = [Row(**row) for row in json.loads(args.from_json.read_text())]
        report(Console(width=200), saved, args.device, budget)
        return 0
    files = sorted((p for p in args.directory.glob("*.py") if not p.name.startswith("_")), key=_order)
    files = [p for p in files if not args.only or p.name.startswith(tuple(args.only))]
    files = files[args.start :]
    files = files[: args.limit] if args.limit else files
    if not files:
        print(f"no task files in {args.directory}", file=sys.stderr)
        return 2
    options = EvalOptions(device=args.device, max_elements=budget)
    console = Console(width=200)
    rows: list[Row] = []
    with Evaluator() as evaluator:
        _ = evaluator.runner
        for path in files:
            rows.append(derive_one(evaluator, path, options))
            console.print(f"{rows[-1].file}: {rows[-1].kept} kept, {rows[-1].seconds:.2f} s", highlight=False)
            if args.json is not None:  # after every file, so a run cut short still leaves its rows
                args.json.write_text(json.dumps([dataclasses.asdict(row) for row in rows], indent=1))
    report(console, rows, args.device, budget)
    if args.json is not None:
        args.json.write_text(json.dumps([dataclasses.asdict(row) for row in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
