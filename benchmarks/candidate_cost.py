"""What generating the repair search's candidates costs, per corpus: the operators' edits, checking each parses, and
deduplicating them (no evaluation).

For every kernel of the given manifests the repair operators' edits are made (`kope.bugs.edit.edits`), then
two ways of each of the two checks are timed on the same edits, side by side in one run:

- parses: the whole edited source (`kope.syntax.parse`, what `edits` did before issue 13's fourth round) against
  the changed lines alone where they were whole statements (`kope.bugs.edit.parses`);
- dedupe key: the whole source's canonical form (`canonical_form`) against the changed lines' (`change_key`).

It also checks the two ways agree (the same verdicts; the same number of distinct candidates per kernel) and prints
a table: corpus, kernels, edits, seconds of each way, and the ratio.

Usage: .venv/bin/python benchmarks/candidate_cost.py [MANIFEST ...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope import syntax
from kope.bugs.edit import Program, edits, parses
from kope.repair.search import canonical_form, change_key

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [ROOT / "src/kope/corpora" / name / "manifest.json" for name in ("handwritten2", "handwritten4")]


def _whole_parses(source: str) -> bool:
    try:
        syntax.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def measure(manifest: Path) -> dict[str, float]:
    entries = json.loads(manifest.read_text())
    row = {"kernels": 0.0, "edits": 0.0, "generate": 0.0, "whole": 0.0, "lines": 0.0, "canonical": 0.0, "key": 0.0}
    disagreements = 0
    for entry in entries:
        source = (manifest.parent / entry["file"]).read_text()
        reference = (manifest.parent / entry["task"]).read_text() if "task" in entry else ""
        t0 = time.perf_counter()
        program = Program.parse(source, reference)
        if program is None:
            continue
        made = edits(program)
        row["generate"] += time.perf_counter() - t0
        row["kernels"] += 1
        row["edits"] += len(made)
        t0 = time.perf_counter()
        whole = [_whole_parses(e.source) for e in made]
        row["whole"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        lines = [parses(source, e.source) for e in made]
        row["lines"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        full = {canonical_form(e.source) for e in made}
        row["canonical"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        keys = {change_key(source, e.source) for e in made} - {""}
        row["key"] += time.perf_counter() - t0
        disagreements += sum(a != b for a, b in zip(whole, lines, strict=True)) + abs(len(full) - len(keys))
    row["disagreements"] = disagreements
    return row


def main() -> int:
    manifests = [Path(a) for a in sys.argv[1:]] or DEFAULT
    table = Table(title="candidate generation cost (seconds, summed over a corpus's kernels)")
    for column in (
        "corpus",
        "kernels",
        "edits",
        "edits made",
        "parse: whole",
        "parse: lines",
        "ratio",
        "dedupe: whole",
        "dedupe: lines",
        "ratio",
        "disagreements",
    ):
        table.add_column(column, justify="right")
    for manifest in manifests:
        r = measure(manifest)
        table.add_row(
            manifest.parent.name,
            f"{r['kernels']:.0f}",
            f"{r['edits']:.0f}",
            f"{r['generate']:.2f}",
            f"{r['whole']:.2f}",
            f"{r['lines']:.2f}",
            f"{r['whole'] / max(r['lines'], 1e-9):.1f}x",
            f"{r['canonical']:.2f}",
            f"{r['key']:.2f}",
            f"{r['canonical'] / max(r['key'], 1e-9):.1f}x",
            f"{r['disagreements']:.0f}",
        )
    Console(width=200).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
