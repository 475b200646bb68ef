"""Near-miss suites: dedupe, building with validation, manifests (ours and the fixtures' list format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import libcst as cst
import pytest

from kope.bench.corpus import build_suite, default_suite_dir, load_suite, plan_groups
from kope.bugs.mutation import OPERATORS, Context, Mutation
from kope.evaluate import Evaluator

FIXTURES = Path(__file__).resolve().parents[2] / "src" / "kope" / "corpora" / "fixtures"
TOY = (Path(__file__).resolve().parents[1] / "fixtures" / "mutation_toy.py").read_text()
"""A kernel that holds one site of every mutation operator (tests/bugs/test_mutation.py)."""


class DropMaskAgain(Mutation):
    """Drops the same masks as `drop-mask`, with a comment: its mutants differ only in formatting."""

    name: ClassVar[str] = "drop-mask-again"
    label: ClassVar[str] = "missing-mask"
    summary: ClassVar[str] = "a duplicate"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        return OPERATORS["drop-mask"].rewrite(node, context)


@pytest.mark.slow
def test_duplicates_by_normalised_code_are_dropped() -> None:
    groups = plan_groups({"toy": TOY}, [OPERATORS["drop-mask"], DropMaskAgain()], seed=0)
    first, second = groups
    assert first.sites == len(first.candidates) > 0 and first.duplicates == 0
    assert second.sites == first.sites and second.candidates == [] and second.duplicates == second.sites
    again = plan_groups({"toy": TOY}, [OPERATORS["drop-mask"]], seed=0)[0]
    assert [m.site for m in again.candidates] == [m.site for m in first.candidates], "seeded order is reproducible"
    other = plan_groups({"toy": TOY}, [OPERATORS["drop-mask"]], seed=1)[0]
    assert sorted(m.site for m in other.candidates) == sorted(m.site for m in first.candidates)


def test_build_keeps_only_near_misses(evaluator: Evaluator, tmp_path: Path) -> None:
    out = tmp_path / "suite"
    manifest = build_suite(
        out,
        ops=["relu"],
        operator_names=["grid-floor-division", "drop-mask"],
        seed=0,
        per_operator=2,
        tries=2,
        min_per_label=0,
        evaluator=evaluator,
        workers=1,
        command="test",
    )
    stats = manifest.stats
    assert stats["grid-floor-division"].kept == 1 and stats["grid-floor-division"].tried == 1
    assert stats["drop-mask"].tried == 2 and stats["drop-mask"].kept == 0, stats["drop-mask"]
    assert sum(stats["drop-mask"].dropped.values()) == 2
    (entry,) = manifest.entries
    assert entry.label == "grid-too-small" and entry.task == "op:relu" and entry.operator == "grid-floor-division"
    assert entry.failing_cases and entry.seed is not None and entry.line
    loaded = load_suite(out)
    assert loaded.entries == manifest.entries
    assert loaded.candidate_path(entry).is_file() and loaded.task_path(entry).name == "task.py"
    assert sorted(p.name for p in (out / "relu").iterdir()) == [Path(entry.candidate).name], "dropped files are removed"
    rebuilt = build_suite(
        out, ops=["relu"], operator_names=["grid-floor-division"], seed=0, tries=1, evaluator=evaluator, workers=1
    )
    assert [e.id for e in rebuilt.entries] == [entry.id]


def test_second_pass_tops_up_rare_labels(evaluator: Evaluator, tmp_path: Path) -> None:
    common = {
        "ops": ["row_sum"],
        "operator_names": ["drop-row-offset"],
        "per_operator": 1,
        "tries": 1,
        "evaluator": evaluator,
        "workers": 2,
    }
    once = build_suite(tmp_path / "once", min_per_label=0, **common)
    assert len(once.entries) == 1 and once.stats["drop-row-offset"].tried == 1
    topped = build_suite(tmp_path / "topped", min_per_label=2, label_tries=5, **common)
    assert len(topped.entries) == 2 and topped.stats["drop-row-offset"].tried == 2
    assert topped.entries[0].id == once.entries[0].id


def test_fixture_manifest_list_format_loads() -> None:
    suite = load_suite(FIXTURES / "manifest.json")
    items = json.loads((FIXTURES / "manifest.json").read_text())
    assert len(suite.entries) == len(items)
    first = suite.entries[0]
    assert first.task.startswith("op:") and suite.task_path(first).is_file() and suite.candidate_path(first).is_file()


def test_shipped_suite_is_large_and_covers_the_taxonomy() -> None:
    suite = load_suite("default")
    assert suite.root == default_suite_dir()
    entries = suite.entries
    assert len(entries) >= 150
    assert len({e.id for e in entries}) == len(entries)
    labels = {e.label for e in entries}
    # missing-atomic cannot show on the interpreter (it runs programs in order); api-misuse breaks the kernel, and
    # the suite keeps near misses only (a mutant that runs and is wrong)
    producible = {op.label for op in OPERATORS.values()} - {"missing-atomic", "api-misuse"}
    assert producible <= labels, producible - labels
    assert len({e.task for e in entries}) == 24
