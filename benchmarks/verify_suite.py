"""Remake every candidate of the shipped default suite from its manifest and compare with the recorded hashes.

The default suite (`src/kope/corpora/suite/manifest.json`) stores no candidate files: each is remade from
(kernel, mutation operator, site) on first use. This script remakes all of them in memory (kope's cache
is not touched) and prints, per mutation operator, how many match their `sha256` and the time taken.
The test suite checks one entry per operator (tests/bench/test_reproduce.py); this checks all 209.

    .venv/bin/python benchmarks/verify_suite.py [--manifest PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from kope.bench.corpus import default_suite_dir, load_suite
from kope.bench.reproduce import ReproductionError, remake
from kope.hashing import content_hash


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, default=default_suite_dir() / "manifest.json")
    args = parser.parse_args()
    suite = load_suite(args.manifest)
    rows: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    wrong: list[str] = []
    began = time.perf_counter()
    for entry in suite.entries:
        row = rows[str(entry.operator)]
        start = time.perf_counter()
        try:
            ok = (
                entry.operator is not None
                and entry.site is not None
                and entry.sha256 == content_hash(remake(entry.task.removeprefix("op:"), entry.operator, entry.site))
            )
        except ReproductionError:
            ok = False
        row[0] += 1
        row[1] += ok
        row[2] += time.perf_counter() - start
        if not ok:
            wrong.append(entry.id)
    print("| operator | entries | identical | seconds |\n|---|---|---|---|")
    for name, (total, same, seconds) in sorted(rows.items()):
        print(f"| {name} | {total:.0f} | {same:.0f} | {seconds:.2f} |")
    total = sum(r[0] for r in rows.values())
    same = sum(r[1] for r in rows.values())
    print(f"| **all** | {total:.0f} | {same:.0f} | {time.perf_counter() - began:.2f} |")
    for entry_id in wrong:
        print(f"differs: {entry_id}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
