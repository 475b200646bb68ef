"""The shipped knowledge base: every taxonomy id, valid references, retrieval that uses the evidence."""

from __future__ import annotations

from conftest import TAXONOMY

from kope.bugs.cue import CueHit
from kope.bugs.recipe import RECIPES
from kope.knowledge.base import KnowledgeBase, example_path
from kope.knowledge.features import FEATURES, Features
from kope.knowledge.retrieval import rank


def shipped() -> KnowledgeBase:
    return KnowledgeBase.load(include_user=False)


def test_the_shipped_patterns_validate() -> None:
    assert shipped().validate() == []


def test_every_taxonomy_id_has_a_pattern() -> None:
    assert sorted(set(TAXONOMY) - set(shipped().patterns)) == []


def test_every_pattern_is_complete() -> None:
    for pattern in shipped().patterns.values():
        assert pattern.symptoms and pattern.code_cues, pattern.id
        assert pattern.example is not None and pattern.recipe is not None, pattern.id
        assert pattern.recipe.name in RECIPES, pattern.id
        path = example_path(pattern)
        assert path is not None and path.name == f"{pattern.id}.py"
        assert all(s.feature in FEATURES for s in pattern.symptoms)
        assert len(pattern.explanation.split()) > 40 and len(pattern.fix.split()) > 15, pattern.id


def test_lexical_search_finds_a_pattern_by_its_words() -> None:
    found = [p.id for p, _ in shipped().search("eps inside the square root of the variance", limit=3)]
    assert "wrong-epsilon" in found


def test_a_code_cue_outranks_a_shared_symptom() -> None:
    features = {"status": "fail", "fails_non_multiple": True, "sweep_fails_off_block": True, "oob_loads": 2}
    hits = [CueHit(cue="mask-inclusive-bound", line=12, text="mask = offs <= n")]
    ranked = rank(shipped(), Features(**features), hits)
    assert ranked[0].pattern == "mask-off-by-one"
    assert any("line 12" in line for line in ranked[0].evidence)
    assert {h.pattern for h in ranked[:3]} >= {"missing-mask"}


def test_symptoms_alone_rank_the_matching_mechanism_first() -> None:
    features = {
        "status": "fail",
        "nan_output": True,
        "prefix_correct": True,
        "rows_from": True,
        "sweep_fails_off_block": True,
        "fails_non_multiple": True,
    }
    assert rank(shipped(), Features(**features), [])[0].pattern == "grid-too-small"
    features = {
        "status": "fail",
        "scaled": True,
        "scale": 0.9765625,
        "scale_is_size_ratio": True,
        "sweep_fails_off_block": True,
    }
    assert rank(shipped(), Features(**features), [])[0].pattern == "wrong-normalizer"
