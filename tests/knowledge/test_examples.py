"""Every pattern's example kernel fails its operator's task, and replacing `before` by `after` passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kope.evaluate import EvalOptions, Evaluator
from kope.knowledge.base import KnowledgeBase, example_path
from kope.knowledge.schema import Pattern
from kope.ops import get_op

PATTERNS = sorted(KnowledgeBase.load(include_user=False).patterns.values(), key=lambda p: p.id)
OPTIONS = EvalOptions(trials=1, timeout_s=60)
NUMERICS_ONLY = EvalOptions(trials=1, timeout_s=60, integrity=False)
"""For the failing run: the integrity gates cannot turn a failure into a pass, so skip their probes."""


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.id for p in PATTERNS])
def test_example_fails_before_and_passes_after(pattern: Pattern, evaluator: Evaluator, tmp_path: Path) -> None:
    example = pattern.example
    kernel = example_path(pattern)
    assert example is not None and kernel is not None
    task = get_op(example.op).task_path
    source = kernel.read_text()
    assert source.count(example.before) == 1

    before = evaluator.evaluate(task, kernel, options=NUMERICS_ONLY)
    assert before.status in ("fail", "error"), before.status

    fixed = tmp_path / kernel.name
    fixed.write_text(source.replace(example.before, example.after))
    after = evaluator.evaluate(task, fixed, options=OPTIONS)
    assert after.status == "pass", (after.status, after.error)
