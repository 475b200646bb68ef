"""Learned patterns: written from a repair that matched no pattern, found by retrieval next time."""

from __future__ import annotations

from pathlib import Path

from kope.cases.task import load_task
from kope.knowledge.base import KnowledgeBase
from kope.knowledge.features import Features
from kope.knowledge.retrieval import rank
from kope.memory import ExperienceStore
from kope.memory.learned import (
    as_pattern,
    learn,
    learned_patterns,
    pattern_id_for,
    unified_diff,
    with_learned,
)
from kope.ops import get_op

BEFORE = "def f(x):\n    scale = x.shape[-1] - 1\n    return scale\n"
AFTER = "def f(x):\n    scale = x.shape[-1]\n    return scale\n"
FEATURES = {
    "status": "fail",
    "visible_fails": True,
    "scaled": True,
    "scale_is_size_ratio": True,
    "small_error": True,
    "mismatch_fraction": 0.9,
    "error_kind": None,
}


def test_a_learned_pattern_is_found_by_retrieval(tmp_path: Path) -> None:
    with ExperienceStore.open(tmp_path / "m.db") as store:
        task = store.ensure_task(load_task(get_op("row_mean").task_path))
        record, new = learn(
            store,
            task_id=task.id,
            family=task.family,
            before=BEFORE,
            after=AFTER,
            explanation="The mean divides by n - 1 instead of n. Use the row length.",
            features=FEATURES,
            cues=["no-such-cue"],
            error_signature=None,
            source_version=None,
            fixed_version=None,
        )
        again, new_again = learn(
            store,
            task_id=task.id,
            family=task.family,
            before=BEFORE,
            after=AFTER,
            explanation="same fix",
            features={},
            cues=[],
            error_signature=None,
            source_version=None,
            fixed_version=None,
        )
        assert (
            new
            and not new_again
            and again.pattern_id == record.pattern_id == pattern_id_for(unified_diff(BEFORE, AFTER))
        )
        pattern = as_pattern(record)
        assert pattern.origin == "learned" and pattern.title.startswith("The mean divides by n - 1")
        assert {s.feature for s in pattern.symptoms} == {
            "visible_fails",
            "scaled",
            "scale_is_size_ratio",
            "small_error",
        }
        assert sum(s.weight for s in pattern.symptoms) == 3.0 and pattern.code_cues == []
        assert "scale" in pattern.keywords
        base = KnowledgeBase.load(include_user=False)
        shipped = len(base)
        extended = with_learned(base, store)
        assert len(base) == shipped and len(extended) == shipped + 1, "the shipped base is not modified"
        assert [p for p in extended.validate() if record.pattern_id in p] == []
        ranked = rank(extended, Features(**FEATURES), [], text="mean divides by the row length n - 1")
        assert record.pattern_id in [h.pattern for h in ranked[:3]]
        unrelated = rank(extended, Features(status="error", error_kind="runtime"), [], text="index out of range")
        assert record.pattern_id not in [h.pattern for h in unrelated]
        assert [p.id for p in learned_patterns(store)] == [record.pattern_id]
        assert extended.search("divides row length")[0][0].id == record.pattern_id


def test_a_learned_id_says_what_the_fix_changed_and_an_old_id_is_kept(tmp_path: Path) -> None:
    from kope.memory.learned import legacy_pattern_id

    diff = unified_diff(BEFORE, AFTER)
    assert pattern_id_for(diff).startswith("learned-scale-") and len(pattern_id_for(diff).split("-")[-1]) == 6
    with ExperienceStore.open(tmp_path / "m.db") as store:
        task = store.ensure_task(load_task(get_op("row_mean").task_path))
        old, _ = store.add_learned(
            {"pattern_id": legacy_pattern_id(diff), "task_id": task.id, "family": task.family, "title": "t",
             "explanation": "e", "diff": diff, "keywords": [], "features": {}, "cues": []}
        )  # fmt: skip
        again, new = learn(
            store, task_id=task.id, family=task.family, before=BEFORE, after=AFTER, explanation="same fix",
            features={}, cues=[], error_signature=None, source_version=None, fixed_version=None,
        )  # fmt: skip
        assert not new and again.pattern_id == old.pattern_id and len(store.learned()) == 1
