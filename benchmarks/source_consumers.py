"""What each reader of candidate code makes of the repository's kernel corpora, as one digest per reader.

Run it on two checkouts (or two commits, through PYTHONPATH) and compare the digests: equal digests
mean the integrity findings, mutants, repair edits, cue hits, recipe edits and launch knobs are the
same. Used for issue 16's one source-analysis layer (docs/guide/source-analysis.md).

    consumer                 what is hashed
    integrity.static         every finding (rule, severity, message, line) of check_source
    bench.mutate             every mutant (operator, site, line, text) of the ops kernels and good fixtures
    repair.operators         every edit (operator, label, line, description, text), as a sorted multiset
    knowledge.cues           every cue hit (cue, line, text)
    knowledge.recipes        every recipe's edits on the near-miss fixtures
    agents.launch            the knobs (id, value, choices) and the notes of scan()

Usage: .venv/bin/python benchmarks/source_consumers.py [--root DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]


def _files(root: Path, *globs: str) -> list[Path]:
    found: list[Path] = []
    for pattern in globs:
        found += sorted(root.glob(pattern))
    return found


def _integrity(paths: list[Path]) -> Iterable[object]:
    from kope.integrity.static import check_source

    for path in paths:
        yield path.name, [f.model_dump() for f in check_source(path.read_text())]


def _mutate(paths: list[Path]) -> Iterable[object]:
    from kope.bugs.mutation import OPERATORS, MutationError, mutants

    for path in paths:
        for name, operator in OPERATORS.items():
            try:
                yield [[path.name, name, m.site, m.line, m.source] for m in mutants(path.read_text(), operator)]
            except MutationError as exc:
                yield path.name, name, str(exc)


def _operators(paths: list[Path]) -> Iterable[object]:
    from kope.bugs.edit import Program, edits

    for path in paths:
        program = Program.parse(path.read_text(), reference="y = x * 0.5 + 1e-5")
        found = [] if program is None else edits(program)
        yield path.name, sorted([e.operator, e.label, e.line, e.description, e.source] for e in found)


def _cues(paths: list[Path]) -> Iterable[object]:
    from kope.bugs.cue import detect

    for path in paths:
        yield path.name, [[h.cue, h.line, h.text] for h in detect(path.read_text())]


def _recipes(paths: list[Path]) -> Iterable[object]:
    from kope.bugs.recipe import RECIPES, RecipeContext, apply

    for path in paths:
        text = path.read_text()
        yield path.name, {name: sorted(apply(name, text, RecipeContext({}, {}))) for name in RECIPES}


def _launch(paths: list[Path]) -> Iterable[object]:
    from kope.agents import launch

    for path in paths:
        if hasattr(launch, "scan"):
            found = launch.scan(path.read_text())
            knobs, notes = found.knobs, found.notes
        else:  # a checkout from before the scan had notes
            knobs, notes = launch.find_knobs(path.read_text()), []
        yield path.name, [[k.id, k.value, list(k.choices)] for k in knobs], notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose corpora are read")
    args = parser.parse_args()
    root: Path = args.root
    fixtures = "tests/fixtures/**/*.py"
    near_miss = ["tests/fixtures/near_miss/*.py", "benchmarks/near_miss_heldout/*.py"]
    readers: list[tuple[str, Callable[[list[Path]], Iterable[object]], list[Path]]] = [
        (
            "integrity.static",
            _integrity,
            _files(
                root,
                fixtures,
                "benchmarks/**/*.py",
                "src/kope/ops/*/*.py",
                "src/kope/bench/suite/**/*.py",
                "src/kope/knowledge/examples/**/*.py",
            ),
        ),
        ("bench.mutate", _mutate, _files(root, "src/kope/ops/*/kernel.py", "tests/fixtures/good/*.py")),
        (
            "repair.operators",
            _operators,
            _files(root, *near_miss, "src/kope/ops/*/kernel.py", "tests/fixtures/provenance/**/*.py"),
        ),
        (
            "knowledge.cues",
            _cues,
            _files(root, *near_miss, "src/kope/knowledge/examples/**/*.py", "tests/fixtures/provenance/**/*.py"),
        ),
        ("knowledge.recipes", _recipes, _files(root, "tests/fixtures/near_miss/*.py")),
        ("agents.launch", _launch, _files(root, "src/kope/ops/*/kernel.py", fixtures)),
    ]
    table = Table(title=f"readers of candidate code over {root}")
    for column in ("consumer", "files", "digest", "seconds"):
        table.add_column(column, justify="right" if column in ("files", "seconds") else "left")
    for name, reader, paths in readers:
        began = time.perf_counter()
        digest = hashlib.sha256()
        for item in reader(paths):
            digest.update(json.dumps(item, sort_keys=True, default=str).encode())
        table.add_row(name, str(len(paths)), digest.hexdigest()[:16], f"{time.perf_counter() - began:.1f}")
    Console().print(table)


if __name__ == "__main__":
    main()
