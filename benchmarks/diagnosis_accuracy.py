"""How often diagnosis names the right bug pattern, how long it takes, and how often recipes repair.

For every kernel of one or more labelled near-miss manifests (a JSON list of
{file, op | task, label}, `task` a task file
relative to the manifest;
`file` relative to the manifest), run `Diagnoser.diagnose` against the operator's task and compare
the ranked hypotheses with the label:

  1. top-1 and top-3 accuracy, overall and per taxonomy id, and seconds per diagnosis;
  2. the same ranking recomputed from the same diagnosis with code cues only and with symptoms only
     (no lexical term in either), to show what each kind of evidence contributes;
  3. for each recipe, how many kernels of its pattern's label it repairs: every edit it proposes is
     evaluated, and a kernel counts as repaired when one of them passes.

Usage: .venv/bin/python benchmarks/diagnosis_accuracy.py [--manifest PATH]... [--no-recipes] [--only FILE]...
(default manifest: src/kope/corpora/fixtures/manifest.json)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.bugs.recipe import apply
from kope.diagnose.diagnoser import Diagnoser
from kope.diagnose.report import Diagnosis
from kope.evaluate import EvalOptions, Evaluator
from kope.knowledge.base import KnowledgeBase
from kope.knowledge.features import Features
from kope.knowledge.retrieval import rank
from kope.ops import get_op

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MANIFEST = ROOT / "src" / "kope" / "corpora" / "fixtures" / "manifest.json"


@dataclass
class Outcome:
    manifest: str
    file: str
    label: str
    ranked: list[str]
    cues_only: list[str]
    symptoms_only: list[str]
    seconds: float
    status: str
    repairs: list[str] = field(default_factory=list)
    """Evaluation status of every edit the label's recipe proposed."""

    def hit(self, ranking: list[str], k: int) -> bool:
        return self.label in ranking[:k]


def task_of(manifest: Path, item: dict[str, str]) -> Path:
    """An entry names a built-in operator (`op`) or a task file relative to the manifest (`task`)."""
    if "op" in item:
        return get_op(item["op"]).task_path
    return (manifest.parent / item["task"]).resolve()


def load_items(manifests: list[Path], only: list[str]) -> list[tuple[Path, dict[str, str]]]:
    items = []
    for manifest in manifests:
        for item in json.loads(manifest.read_text()):
            if not only or item["file"] in only:
                items.append((manifest, item))
    return items


def ablations(base: KnowledgeBase, diagnosis: Diagnosis) -> tuple[list[str], list[str]]:
    hits = diagnosis.cues
    limit = len(base)
    cues_only = [h.pattern for h in rank(base, Features(), hits, limit=limit)]
    symptoms_only = [h.pattern for h in rank(base, diagnosis.features, [], limit=limit)]
    return cues_only, symptoms_only


def repairs(
    evaluator: Evaluator,
    base: KnowledgeBase,
    diagnosis: Diagnosis,
    label: str,
    kernel: Path,
    task: Path,
    options: EvalOptions,
    scratch: Path,
) -> list[str]:
    pattern = base.patterns.get(label)
    if pattern is None or pattern.recipe is None:
        return []
    statuses = []
    for i, edit in enumerate(apply(pattern.recipe.name, kernel.read_text())):
        candidate = scratch / f"{kernel.stem}.{i}.py"
        candidate.write_text(edit)
        statuses.append(evaluator.evaluate(task, candidate, options=options).status)
    return statuses


def accuracy_table(title: str, outcomes: list[Outcome]) -> Table:
    table = Table(title=title)
    for column in ("pattern", "kernels", "top-1", "top-3", "cues only @1", "symptoms only @1", "symptoms only @3"):
        table.add_column(column, justify="left" if column == "pattern" else "right")
    by_label: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_label[outcome.label].append(outcome)
    rows = [(label, by_label[label]) for label in sorted(by_label)] + [("all", outcomes)]
    for label, group in rows:
        n, percent = len(group), label == "all"

        def share(values: list[bool], n: int = n, percent: bool = percent) -> str:
            return f"{sum(values)}/{n} ({100 * sum(values) / n:.0f}%)" if percent else f"{sum(values)}/{n}"

        table.add_row(
            label,
            str(n),
            share([o.hit(o.ranked, 1) for o in group]),
            share([o.hit(o.ranked, 3) for o in group]),
            share([o.hit(o.cues_only, 1) for o in group]),
            share([o.hit(o.symptoms_only, 1) for o in group]),
            share([o.hit(o.symptoms_only, 3) for o in group]),
        )
    return table


def recipe_table(base: KnowledgeBase, outcomes: list[Outcome]) -> Table:
    table = Table(title="recipes: kernels of the recipe's label repaired (an edit passes evaluation)")
    for column in ("recipe", "pattern", "kernels", "repaired", "edits proposed", "edits passing"):
        table.add_column(column, justify="left" if column in ("recipe", "pattern") else "right")
    for pattern in sorted(base.patterns.values(), key=lambda p: p.recipe.name if p.recipe else ""):
        if pattern.recipe is None:
            continue
        group = [o for o in outcomes if o.label == pattern.id]
        if not group:
            continue
        table.add_row(
            pattern.recipe.name,
            pattern.id,
            str(len(group)),
            str(sum("pass" in o.repairs for o in group)),
            str(sum(len(o.repairs) for o in group)),
            str(sum(o.repairs.count("pass") for o in group)),
        )
    total = [o for o in outcomes if base.patterns.get(o.label) and base.patterns[o.label].recipe]
    table.add_row(
        "all",
        "",
        str(len(total)),
        str(sum("pass" in o.repairs for o in total)),
        str(sum(len(o.repairs) for o in total)),
        str(sum(o.repairs.count("pass") for o in total)),
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, action="append", help="a labelled manifest (repeatable)")
    parser.add_argument("--only", action="append", default=[], help="only this kernel file (repeatable)")
    parser.add_argument("--no-recipes", action="store_true", help="skip the recipe repair counts")
    parser.add_argument("--json", type=Path, help="also write every outcome to this file")
    args = parser.parse_args()
    manifests = [m.resolve() for m in (args.manifest or [DEFAULT_MANIFEST])]
    console = Console(width=150)
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cores, python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}, device cpu (Triton interpreter)"
    )
    base = KnowledgeBase.load(include_user=False)
    repair_options = EvalOptions(trials=1)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp, Evaluator(cache_dir=Path(tmp) / "cache") as evaluator:
        diagnoser = Diagnoser(evaluator, base)
        for manifest, item in load_items(manifests, args.only):
            kernel, task = manifest.parent / item["file"], task_of(manifest, item)
            began = time.perf_counter()
            diagnosis = diagnoser.diagnose(task, kernel)
            seconds = time.perf_counter() - began
            cues_only, symptoms_only = ablations(base, diagnosis)
            outcome = Outcome(
                manifest=manifest.parent.name,
                file=item["file"],
                label=item["label"],
                ranked=[h.pattern for h in diagnosis.hypotheses],
                cues_only=cues_only,
                symptoms_only=symptoms_only,
                seconds=seconds,
                status=diagnosis.status,
            )
            if not args.no_recipes:
                outcome.repairs = repairs(
                    evaluator, base, diagnosis, item["label"], kernel, task, repair_options, Path(tmp)
                )
            outcomes.append(outcome)
            mark = "top-1" if outcome.hit(outcome.ranked, 1) else "top-3" if outcome.hit(outcome.ranked, 3) else "miss"
            console.print(
                f"  {item['file']:44s} {item['label']:22s} {mark:5s} {seconds:5.1f}s "
                f"{', '.join(outcome.ranked[:3])}  repairs: {outcome.repairs}",
                highlight=False,
            )

    for manifest in manifests:
        group = [o for o in outcomes if o.manifest == manifest.parent.name]
        if group:
            console.print(accuracy_table(f"diagnosis accuracy: {manifest.relative_to(ROOT)}", group))
    if len(manifests) > 1:
        console.print(accuracy_table("diagnosis accuracy: all manifests", outcomes))
    times = [o.seconds for o in outcomes]
    if times:
        console.print(
            f"seconds per diagnosis: median {statistics.median(times):.1f}, mean {statistics.mean(times):.1f}, "
            f"max {max(times):.1f} over {len(times)} kernels"
        )
    if not args.no_recipes:
        console.print(recipe_table(base, outcomes))
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))


if __name__ == "__main__":
    main()
