"""The bug kinds' registry: every cue, recipe, edit and mutation has one kind; ids are typed and complete; a user
pattern points at a kind's edits."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TAXONOMY

from kope.bugs import cue, edit, mutation, recipe
from kope.bugs.registry import BUG_IDS, KIND_IDS, KINDS, edits_named, kind, kind_of
from kope.diagnose.report import Diagnosis
from kope.knowledge.base import KnowledgeBase
from kope.knowledge.features import Features
from kope.knowledge.retrieval import rank
from kope.repair.sites import Evidence


def test_kinds_are_the_typed_ids_in_order_each_its_own_module() -> None:
    assert tuple(k.id for k in KINDS) == KIND_IDS
    for k in KINDS:
        assert k.module.__name__ == f"kope.bugs.{k.id}"
        assert k.summary, k.id


def test_every_taxonomy_id_has_exactly_one_home() -> None:
    assert sorted(BUG_IDS) == sorted(TAXONOMY)
    homes = [bug for k in KINDS for bug in k.bugs]
    assert sorted(homes) == sorted(BUG_IDS)
    assert kind_of("missing-mask") is kind("masks")
    assert kind_of("a-user-pattern") is None


def test_every_registered_role_belongs_to_one_kind() -> None:
    for role, registry in (
        ("cue", cue.CUES),
        ("recipe", recipe.RECIPES),
        ("edit", edit.OPERATORS),
        ("mutation", mutation.OPERATORS),
    ):
        owned = [name for k in KINDS for name in k.role(role)]  # type: ignore[arg-type]
        assert sorted(owned) == sorted(registry), role


def test_the_registries_keep_their_fixed_orders() -> None:
    assert list(cue.CUES) == list(cue.ORDER)
    assert list(recipe.RECIPES) == list(recipe.ORDER)
    assert list(edit.OPERATORS) == list(edit.ORDER)
    assert list(mutation.OPERATORS) == list(mutation.ORDER)
    assert [op.name for op in mutation.operators()] == list(mutation.ORDER)


def test_every_taxonomy_id_is_injected_and_repaired_by_its_labels() -> None:
    """Each built-in bug has a mutation that injects it and an edit that repairs it (by the taxonomy label)."""
    mutated = {op.label for op in mutation.OPERATORS.values()}
    repaired = {label for label, _ in edit.OPERATORS.values()}
    assert mutated == set(BUG_IDS)
    assert repaired == set(BUG_IDS)


def test_a_pattern_names_a_kind_or_an_operator_and_gets_its_edits_in_search_order() -> None:
    assert edits_named(["masks"]) == list(kind("masks").edits)
    assert edits_named(["loop-bound", "masks", "nonsense"]) == [
        name for name in edit.OPERATORS if name in {"loop-bound", *kind("masks").edits}
    ]


USER_PATTERN = """\
id: my-tail-bug
title: Our kernels' tail bug
summary: The last block of our tiled kernels misses its bound.
symptoms:
  - {feature: fails_non_multiple, weight: 5}
explanation: Our own words for a family of bugs kope's taxonomy splits differently.
fix: Make the bound strict.
edits: [masks, loop-bound]
"""


def test_a_user_pattern_points_the_search_at_a_kinds_edits(tmp_path: Path) -> None:
    (tmp_path / "my-tail-bug.yaml").write_text(USER_PATTERN)
    base = KnowledgeBase.load([tmp_path], include_user=False)
    assert [p for p in base.validate() if "my-tail-bug" in p] == []
    ranked = rank(base, Features(status="fail", fails_non_multiple=True), [])
    mine = next(h for h in ranked if h.pattern == "my-tail-bug")
    assert mine.edits == edits_named(["masks", "loop-bound"])
    assert "edits" in mine.model_dump()
    assert all("edits" not in h.model_dump() for h in ranked if h.pattern != "my-tail-bug")

    evidence = Evidence.of(Diagnosis(status="fail", task="t", candidate="c", hypotheses=[mine]))
    assert evidence.hypothesis_weight("compare-flip", "mask-off-by-one") == 1.0
    assert evidence.hypothesis_weight("loop-bound", "loop-bound") == 1.0
    assert evidence.hypothesis_weight("stride-swap", "wrong-stride") == 0.0
    assert "my-tail-bug names this edit" in evidence.why("compare-flip", "mask-off-by-one", 3)


def test_an_unknown_name_in_edits_fails_validation(tmp_path: Path) -> None:
    (tmp_path / "my-tail-bug.yaml").write_text(USER_PATTERN.replace("[masks, loop-bound]", "[maskz]"))
    problems = KnowledgeBase.load([tmp_path], include_user=False).validate()
    assert any("unknown edits 'maskz'" in p for p in problems)


def test_two_kinds_cannot_register_one_operator_name() -> None:
    """A second kind's operator of a taken name would replace the first, which then never runs: refused at import."""
    from kope.bugs.edit import operator

    def impostor(program: object) -> list[object]:
        return []

    with pytest.raises(ValueError, match=r"already kope\.bugs\.values"):
        operator("reduce-axis", "api-misuse")(impostor)  # type: ignore[arg-type]
