"""Compare two `kope bench run` result directories on the same suite, entry by entry.

For each run: Pass@1 (accepted repairs), diagnosis top-1 / top-3 (the entry's label first / among the
first three hypotheses), and the median and mean seconds per attempt; then evaluations and seconds per
repair (from each attempt's transcript: the debug report's `evaluations`, every version the loop and its
search evaluated, acceptance checks included); then the entries whose outcome differs. Typical use: the
same corpus before and after a change (two commits, or two arms).

Usage: .venv/bin/python benchmarks/compare_runs.py BEFORE_DIR AFTER_DIR [--names "before|after"]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table


def _rows(directory: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for line in (directory / "attempts.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[f"{row['case']}#{row['sample']}"] = row
    return rows


def _hypotheses(row: dict[str, Any]) -> list[str]:
    return list(row.get("hypotheses") or [])


def _summary(rows: dict[str, dict[str, Any]]) -> tuple[str, str, str, str, str]:
    n = len(rows)
    passed = sum(1 for r in rows.values() if r["accepted"])
    top1 = sum(1 for r in rows.values() if _hypotheses(r)[:1] == [r["label"]])
    top3 = sum(1 for r in rows.values() if r["label"] in _hypotheses(r)[:3])
    seconds = [float(r["wall_s"]) for r in rows.values()]
    return (
        f"{passed}/{n} ({100 * passed / n:.1f}%)",
        f"{100 * top1 / n:.1f}%",
        f"{100 * top3 / n:.1f}%",
        f"{statistics.median(seconds):.1f}",
        f"{statistics.fmean(seconds):.1f}",
    )


def _evaluations(row: dict[str, Any]) -> int | None:
    """The debug report's evaluation count, read from the attempt's transcript (None when it is missing)."""
    output = row.get("output")
    if not output:
        return None
    transcript = Path(output).with_name("transcript.jsonl")
    if not transcript.exists():
        return None
    for line in reversed(transcript.read_text().splitlines()):
        event = json.loads(line) if line.strip() else {}
        if event.get("event") == "end":
            value = event.get("report", {}).get("evaluations")
            return int(value) if value is not None else None
    return None


def _costs(rows: dict[str, dict[str, Any]]) -> tuple[str, str, str, str]:
    def median(values: list[float]) -> str:
        return f"{statistics.median(values):.1f}" if values else "-"

    every = [e for r in rows.values() if (e := _evaluations(r)) is not None]
    repaired = [r for r in rows.values() if r["accepted"]]
    per_repair = [e for r in repaired if (e := _evaluations(r)) is not None]
    return (
        median([float(e) for e in every]),
        median([float(e) for e in per_repair]),
        median([float(r["wall_s"]) for r in repaired]),
        median([float(r["wall_s"]) for r in rows.values() if not r["accepted"]]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--names", default="before|after", help="two run names, separated by |")
    args = parser.parse_args()
    names = args.names.split("|")
    runs = [_rows(args.before), _rows(args.after)]
    console = Console(width=140)
    table = Table(title="Pass@1, diagnosis and seconds per attempt")
    for column in ("run", "Pass@1", "top-1", "top-3", "median s", "mean s"):
        table.add_column(column)
    for name, rows in zip(names, runs, strict=True):
        table.add_row(name, *_summary(rows))
    console.print(table)
    costs = Table(title="evaluations and seconds (medians)")
    for column in ("run", "evaluations per attempt", "evaluations per repair", "s per repair", "s per failure"):
        costs.add_column(column)
    for name, rows in zip(names, runs, strict=True):
        costs.add_row(name, *_costs(rows))
    console.print(costs)
    changed = Table(title="entries whose outcome differs")
    for column in ("entry", "label", names[0], names[1]):
        changed.add_column(column)
    for key in sorted(set(runs[0]) | set(runs[1])):
        outcomes = [str(r.get(key, {}).get("outcome", "-")) for r in runs]
        if outcomes[0] != outcomes[1]:
            label = str((runs[1].get(key) or runs[0][key])["label"])
            changed.add_row(key.split("#")[0], label, *outcomes)
    console.print(changed)


if __name__ == "__main__":
    main()
