"""Static reach of repair operators on the real-discard sets: in how many candidates do they offer an edit?

For each candidate of benchmarks/realdiscards (manifest.csv and the dev2–dev6 pools' manifests), the chosen operators
are run on its source alone (`kope.bugs.edit.edits`: no evaluation, no error message, so operators that read the
error offer nothing here) and the table counts, per split, the candidates with any edit and with a grounded one.
Nothing is evaluated and no candidate is shown: the held splits' counts are measured, never read. Run it with
another checkout's `src` on PYTHONPATH for the "before" column of a change.

Usage: .venv/bin/python benchmarks/operator_reach.py --ops autotune-grid,autotune-restore [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from pathlib import Path

from kope.bugs.edit import OPERATORS, Program, edits

SETS = Path(__file__).resolve().parent / "realdiscards"
MANIFESTS = (
    "manifest.csv",
    "dev2/manifest.csv",
    "dev3/manifest.csv",
    "dev4/manifest.csv",
    "dev5/manifest.csv",
    "dev6/manifest.csv",
)


def reach(operators: list[str]) -> dict[str, Counter[str]]:
    """Per split: `rows`, `offered` (any edit), `grounded` (a grounded edit)."""
    counts: dict[str, Counter[str]] = {}
    for manifest in MANIFESTS:
        path = SETS / manifest
        if not path.exists():
            continue
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                split = counts.setdefault(row["split"], Counter())
                split["rows"] += 1
                candidate = path.parent / row["candidate"]
                if not candidate.exists():
                    split["missing"] += 1
                    continue
                program = Program.parse(candidate.read_text(errors="replace"))
                made = edits(program, operators) if program is not None else []
                split["offered"] += bool(made)
                split["grounded"] += any(e.grounded for e in made)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", required=True, help="comma-separated operator names")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    operators = [o.strip() for o in args.ops.split(",") if o.strip()]
    unknown = [o for o in operators if o not in OPERATORS]
    if unknown:
        parser.error(f"unknown operator(s) in this checkout: {', '.join(unknown)}")
    counts = reach(operators)
    if args.json:
        print(json.dumps({split: dict(c) for split, c in sorted(counts.items())}, indent=2))
        return
    print(f"operators: {', '.join(operators)}")
    print("| split | candidates | any edit | grounded edit |")
    print("|---|---:|---:|---:|")
    for split, c in sorted(counts.items()):
        print(f"| {split} | {c['rows']} | {c['offered']} | {c['grounded']} |")
    total = sum(counts.values(), Counter())
    print(f"| all | {total['rows']} | {total['offered']} | {total['grounded']} |")


if __name__ == "__main__":
    main()
