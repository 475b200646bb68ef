"""The proposers: recipes in rank order skipping what was tried, a model's reply parsed into one decision."""

from __future__ import annotations

from conftest import SCALE_GOOD

from kope.agents.proposers import ModelProposer, RecipeProposer, RepairView
from kope.diagnose.diagnoser import Diagnosis
from kope.hashing import content_hash
from kope.knowledge.retrieval import Hypothesis
from kope.models.base import Message
from kope.models.replay import ScriptedModel

GOOD = SCALE_GOOD.read_text()
UNGRIDDED = GOOD.replace("triton.cdiv(n, 256)", "n // 256")
ASK = [Message(role="user", content="fix it")]


def view(source: str, *hypotheses: Hypothesis, recipes: bool = True, tried: set[str] | None = None) -> RepairView:
    diagnosis = Diagnosis(status="fail", task="t", candidate="c", hypotheses=list(hypotheses))
    return RepairView(source=source, prompt=ASK, diagnosis=diagnosis, recipes=recipes, tried=tried or set())


def test_recipe_proposer_gives_the_next_untried_edit_of_the_ranked_recipes() -> None:
    grid = Hypothesis(pattern="grid-too-small", score=0.9, recipe="grid-ceil-div")
    none = Hypothesis(pattern="wrong-constant", score=1.0)
    proposal = RecipeProposer().propose(view(UNGRIDDED, none, grid))
    assert proposal is not None and proposal.kind == "edit" and proposal.source is not None
    assert "triton.cdiv(n, 256)" in proposal.source and "grid-too-small (grid-ceil-div)" in proposal.text
    assert RecipeProposer().propose(view(UNGRIDDED, grid, tried={content_hash(proposal.source)})) is None
    assert RecipeProposer().propose(view(UNGRIDDED, grid, recipes=False)) is None, "the recipes ablation"
    assert RecipeProposer().propose(RepairView(source=UNGRIDDED, prompt=ASK, diagnosis=None)) is None


def test_model_proposer_turns_each_kind_of_reply_into_one_decision() -> None:
    replies = [
        "<<<<<<< SEARCH\nn // 256\n=======\ntriton.cdiv(n, 256)\n>>>>>>> REPLACE\n",
        "PROBE bounds\n",
        "I do not know.",
        "<<<<<<< SEARCH\nnot in the file\n=======\nx\n>>>>>>> REPLACE\n",
    ]
    proposer = ModelProposer(ScriptedModel(replies, repeat_last=False))
    edit, probe, nothing, failed = (proposer.propose(view(UNGRIDDED)) for _ in replies)
    assert edit.kind == "edit" and edit.source == GOOD and edit.usage.total > 0 and edit.by == "scripted"
    assert probe.kind == "instrumentation" and [r.kind for r in probe.requests] == ["bounds"]
    assert nothing.kind == "no-edit" and nothing.source is None
    assert failed.kind == "edit-failed" and failed.note
    error = proposer.propose(view(UNGRIDDED))
    assert error.kind == "model-error" and "no reply scripted" in error.note
    quiet = ModelProposer(ScriptedModel(["PROBE bounds\n"]), instrumentation=False).propose(view(UNGRIDDED))
    assert quiet.kind == "no-edit", "the optimize loop takes no instrumentation requests"
