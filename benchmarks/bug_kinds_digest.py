"""One digest per role of the bug kinds (cues, recipes, repair edits, mutations) over kope's kernels, before and after.

Equal digests on two checkouts mean the registries' orders and descriptions, every cue hit, every recipe's edits,
every repair operator's edits (in order, with labels, lines, descriptions and cues) and every mutant are the same.
It reads the roles from `kope.bugs` and, on a checkout from before it, from `kope.knowledge.cues`,
`kope.knowledge.recipes`, `kope.repair.operators` and `kope.bench.mutate`.

Usage: .venv/bin/python benchmarks/bug_kinds_digest.py [--root DIR]   (PYTHONPATH=DIR/src for another checkout)
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "y = torch.nn.functional.gelu(x) * 0.5 + 1e-5"


def _module(*names: str) -> ModuleType:
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"none of {names}")


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose kernels are read")
    parser.add_argument("--only", choices=["cues", "recipes", "edits", "mutations"], help="one role alone")
    args = parser.parse_args()
    root: Path = args.root
    cues = _module("kope.bugs.cue", "kope.knowledge.cues")
    recipes = _module("kope.bugs.recipe", "kope.knowledge.recipes")
    ops = _module("kope.bugs.edit", "kope.repair.operators")
    mut = _module("kope.bugs.mutation", "kope.bench.mutate")
    files = [
        *sorted(root.glob("src/kope/ops/*/kernel.py")),
        *sorted(root.glob("tests/fixtures/good/*.py")),
        *sorted(root.glob("src/kope/corpora/examples/*.py")),
        *sorted(root.glob("tests/fixtures/provenance/**/*.py")),
        *sorted(root.glob("src/kope/corpora/handwritten/*/candidate.py"))[:40],
        *sorted(root.glob("src/kope/corpora/handwritten/**/*.py"))[:40],
    ]
    texts = {str(p.relative_to(root)): p.read_text() for p in files}
    out: dict[str, Any] = {"files": len(texts)}
    out["orders"] = _digest(
        [
            list(cues.CUES),
            list(cues.DESCRIPTIONS.items()),
            list(recipes.RECIPES),
            list(recipes.RECIPE_DESCRIPTIONS.items()),
            list(ops.OPERATORS),
            list(mut.OPERATORS),
            [(o.name, o.label, o.summary) for o in mut.OPERATORS.values()],
        ]
    )
    only: str | None = args.only
    if only in (None, "cues"):
        out["cues"] = _digest({k: [[h.cue, h.line, h.text] for h in cues.detect(t)] for k, t in texts.items()})
    if only in (None, "recipes"):
        out["recipes"] = _digest({k: {n: recipes.apply(n, t) for n in recipes.RECIPES} for k, t in texts.items()})
    if only in (None, "edits"):
        edits: dict[str, object] = {}
        for key, text in texts.items():
            program = ops.Program.parse(text, reference=REFERENCE)
            found = [] if program is None else ops.edits(program)
            edits[key] = [[e.operator, e.label, e.line, e.description, e.source, e.cue] for e in found]
        out["edits"] = _digest(edits)
    if only in (None, "mutations"):
        mutants: dict[str, object] = {}
        for key, text in list(texts.items())[:40]:
            for name, operator in mut.OPERATORS.items():
                try:
                    found_mutants = mut.mutants(text, operator)
                except mut.MutationError as exc:
                    mutants[f"{key}:{name}"] = str(exc)
                    continue
                mutants[f"{key}:{name}"] = [[m.site, m.line, m.label, m.source] for m in found_mutants]
        out["mutations"] = _digest(mutants)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
