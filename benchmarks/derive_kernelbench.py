"""Derived cases on a directory of KernelBench-format task files (e.g. KernelBench's level 1).

For every task file: the time derivation takes (the plan job included, the fork server already
started), how many cases it keeps, how many distinct sizes they cover, and why it fails where it
does. Summary: the fraction of files with at least 3 valid cases (and with at least 3 distinct
sizes), the time per file, the files where derivation fails and the reason.

Usage: .venv/bin/python benchmarks/derive_kernelbench.py DIRECTORY [--device cpu] [--max-elements N]
       [--limit N] [--json FILE]

The task files are read where they are; nothing is copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.derive import Derivation, default_max_elements, distinct_shapes
from kope.errors import KopeError
from kope.evaluate import EvalOptions, Evaluator
from kope.task import load_task


def _order(path: Path) -> tuple[int, str]:
    match = re.match(r"(\d+)_", path.name)
    return (int(match.group(1)) if match else 1 << 30, path.name)


def derive_one(evaluator: Evaluator, path: Path, options: EvalOptions) -> dict[str, object]:
    began = time.perf_counter()
    row: dict[str, object] = {"file": path.name}
    try:
        derivation: Derivation = evaluator.derivation(load_task(path), options)
    except KopeError as exc:
        row.update(seconds=time.perf_counter() - began, kept=0, shapes=0, error=str(exc).splitlines()[0])
        return row
    kept = derivation.kept
    base = next((c for c in kept if c.visible), None)
    row.update(
        seconds=time.perf_counter() - began,
        jobs=derivation.jobs + 1,
        probe=derivation.probe,
        sizing=[p.name for p in derivation.parameters if p.sizes_inputs],
        fixed=[p.name for p in derivation.parameters if not p.sizes_inputs],
        original_numel=derivation.original_numel,
        base=base.kind if base else None,
        kept=len(kept),
        kinds=[c.name for c in kept],
        shapes=distinct_shapes(kept),
        error=derivation.error,
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-elements", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="only the first N files")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    files = sorted((p for p in args.directory.glob("*.py") if not p.name.startswith("_")), key=_order)
    files = files[: args.limit] if args.limit else files
    if not files:
        print(f"no task files in {args.directory}", file=sys.stderr)
        return 2
    budget = args.max_elements or default_max_elements(args.device)
    options = EvalOptions(device=args.device, max_elements=budget)
    console = Console(width=200)
    rows: list[dict[str, object]] = []
    with Evaluator() as evaluator:
        _ = evaluator.runner
        for path in files:
            rows.append(derive_one(evaluator, path, options))
            row = rows[-1]
            console.print(f"{row['file']}: {row['kept']} kept, {row['shapes']} sizes, {row['seconds']:.2f} s", highlight=False)

    table = Table(title=f"derived cases, {args.device}, budget {budget} input elements", title_justify="left")
    for column in ("file", "sizing names", "left alone", "original elements", "base", "kept", "sizes", "s"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            str(row["file"])[:48],
            ",".join(row.get("sizing", []))[:40],  # type: ignore[arg-type]
            ",".join(row.get("fixed", []))[:30],  # type: ignore[arg-type]
            f"{row.get('original_numel') or 0:.3g}",
            str(row.get("base") or "-"),
            str(row["kept"]),
            str(row["shapes"]),
            f"{row['seconds']:.2f}",
        )
    console.print(table)

    seconds = [float(row["seconds"]) for row in rows]  # type: ignore[arg-type]
    three = sum(1 for row in rows if int(row["kept"]) >= 3)  # type: ignore[call-overload]
    three_sizes = sum(1 for row in rows if int(row["shapes"]) >= 3)  # type: ignore[call-overload]
    failed = [row for row in rows if int(row["kept"]) == 0 or row.get("error")]  # type: ignore[call-overload]
    summary = Table(title="summary", title_justify="left")
    summary.add_column("measure")
    summary.add_column("value")
    summary.add_row("machine", f"{platform.machine()}, {platform.processor() or '?'}, Python {platform.python_version()}")
    summary.add_row("files", str(len(rows)))
    summary.add_row(">= 3 valid cases", f"{three}/{len(rows)} ({three / len(rows):.0%})")
    summary.add_row(">= 3 distinct sizes", f"{three_sizes}/{len(rows)} ({three_sizes / len(rows):.0%})")
    summary.add_row("kept cases per file (median)", f"{statistics.median(int(r['kept']) for r in rows):g}")  # type: ignore[call-overload]
    summary.add_row("seconds per file: median / mean / max", f"{statistics.median(seconds):.2f} / "
                    f"{statistics.fmean(seconds):.2f} / {max(seconds):.2f}")
    summary.add_row("jobs per file (median)", f"{statistics.median(int(r.get('jobs', 0)) for r in rows):g}")  # type: ignore[call-overload]
    summary.add_row("failed", str(len(failed)))
    console.print(summary)
    for row in failed:
        console.print(f"  {row['file']}: {row.get('error')}", highlight=False)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
