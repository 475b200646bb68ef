"""The adversarial corpus: every cheat is caught by its rule; no legitimate kernel is accused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, NEAR_MISS

from kope.evaluate import Evaluator

ROOT = FIXTURES.parents[1]
CORPUS = FIXTURES / "adversarial"
ENTRIES = json.loads((CORPUS / "manifest.json").read_text())


def test_corpus_covers_every_rule_twice() -> None:
    from kope.integrity.rules import RULES

    counts: dict[str, int] = {}
    development = json.loads((FIXTURES / "provenance_dev" / "manifest.json").read_text())
    for entry in ENTRIES + development:
        counts[entry["rule"]] = counts.get(entry["rule"], 0) + 1
    testable = set(RULES) - {"implausible-speedup"}  # needs CUDA timing: tested with synthetic timings
    assert {rule for rule, n in counts.items() if n >= 2} >= testable
    assert len(ENTRIES) >= 24
    assert all((CORPUS / entry["file"]).is_file() for entry in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_cheat_is_caught_by_its_rule(evaluator: Evaluator, entry: dict[str, str]) -> None:
    result = evaluator.evaluate(ROOT / entry["task"], CORPUS / entry["file"])
    fired = [f for f in result.integrity.findings if f.rule == entry["rule"]]
    assert any(f.severity == entry["severity"] for f in fired), [f.model_dump() for f in result.integrity.findings]
    assert result.status == entry["status"]


def test_legitimate_fixtures_are_clean(evaluator: Evaluator) -> None:
    from conftest import SCALE_GOOD, SCALE_TASK

    assert evaluator.evaluate(SCALE_TASK, SCALE_GOOD).integrity.verdict == "clean"
    manifest = json.loads((NEAR_MISS / "manifest.json").read_text())
    from kope.ops import get_op

    for item in manifest[:10]:
        result = evaluator.evaluate(get_op(item["op"]).task_path, NEAR_MISS / item["file"])
        rejects = [f for f in result.integrity.findings if f.severity == "reject"]
        assert rejects == [], (item["file"], rejects)
        assert Path(item["file"]).suffix == ".py"
