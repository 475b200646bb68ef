"""Does the repair search generate the fix, and how early does it rank it? (no repair run: no evaluation of edits)

For each entry of a near-miss manifest whose correct kernel is known (`--good DIR`: `DIR/<task>.py`, the kernel the
entry's bug was made from; kept outside the repository for the hand-written corpora), the repair search's candidates
are generated (`RepairSearch.candidates`: the recipes of the top hypotheses and every repair operator's edits,
deduplicated and ranked) and compared with the correct kernel by their syntax trees
(`kope.repair.search.canonical_form`, so spacing, comments, redundant parentheses and the order of a product's or a
sum's two operands do not count). The table says, per entry, whether a single edit gives the correct kernel, its
place in the ranking (1 = tried first) and its operator; `--diagnose` ranks with the real diagnosis (each entry is
diagnosed in kope's sandbox, a few seconds each), otherwise with no evidence. A fix that needs two edits, or that
the search writes differently from the correct kernel (another but equal expression), shows as not generated: read
those by hand.

It separates the two ways a repair fails: the fix is never generated (an operator is missing), or it is generated
but ranked beyond the search's budget (the evidence is missing).

Usage: .venv/bin/python benchmarks/search_coverage.py --manifest M --good DIR [--diagnose] [--only NAME ...] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.cases.task import load_task
from kope.diagnose import Diagnoser
from kope.evaluate import EvalOptions, Evaluator
from kope.repair.search import RepairSearch, canonical_form


@dataclass
class Coverage:
    file: str
    label: str
    candidates: int
    rank: int | None
    """1-based place of the first candidate equal to the correct kernel; None when none is."""
    operator: str
    top3: list[str]


def _shape(source: str) -> str | None:
    try:
        ast.parse(source)
    except SyntaxError:
        return None
    return canonical_form(source)


def coverage(manifest: Path, good: Path, *, diagnose: bool, only: list[str]) -> list[Coverage]:
    entries = json.loads(manifest.read_text())
    with Evaluator() as evaluator:
        return [row for entry in entries if (row := _entry(manifest, good, entry, evaluator, diagnose, only))]


def _entry(
    manifest: Path, good: Path, entry: dict, evaluator: Evaluator, diagnose: bool, only: list[str]
) -> Coverage | None:
    name = Path(entry["file"]).stem
    if only and name not in only:
        return None
    task_path = (manifest.parent / entry["task"]).resolve()
    correct = good / f"{task_path.parent.name}.py"
    if not correct.exists():
        print(f"skip {name}: no correct kernel {correct}", file=sys.stderr)
        return None
    target = _shape(correct.read_text())
    candidate = manifest.parent / entry["file"]
    source = candidate.read_text()
    task = load_task(task_path)
    diagnosis = None
    if diagnose:
        diagnosis = Diagnoser(evaluator).diagnose(task, candidate, options=EvalOptions(trials=1))
    ranked = RepairSearch(evaluator).candidates(source, diagnosis, task.source)
    rank = next((i for i, c in enumerate(ranked, start=1) if _shape(c.source) == target), None)
    top3 = [h.pattern for h in diagnosis.hypotheses[:3]] if diagnosis is not None else []
    row = Coverage(
        file=name,
        label=entry["label"],
        candidates=len(ranked),
        rank=rank,
        operator=ranked[rank - 1].operator if rank else "",
        top3=top3,
    )
    print(f"{name}: {'rank ' + str(rank) if rank else 'not generated'} of {len(ranked)}", file=sys.stderr)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument("--good", type=Path, required=True, help="directory of the correct kernels, <task>.py")
    parser.add_argument("--diagnose", action="store_true", help="rank with each entry's real diagnosis")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = coverage(args.manifest.resolve(), args.good.resolve(), diagnose=args.diagnose, only=args.only)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
        return 0
    table = Table(title=f"search coverage: {args.manifest}")
    for column in ("entry", "label", "fix generated", "rank", "of", "operator", "diagnosis top 3"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r.file,
            r.label,
            "yes" if r.rank else "no",
            str(r.rank or "-"),
            str(r.candidates),
            r.operator,
            ", ".join(r.top3),
        )
    console = Console(width=200)
    console.print(table)
    ranks = [r.rank for r in rows if r.rank]
    within = sum(1 for r in ranks if r <= 100)
    console.print(
        f"{len(ranks)}/{len(rows)} fixes generated as one edit; {within} ranked within the first 100"
        + (f"; median rank {statistics.median(ranks):g}" if ranks else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
