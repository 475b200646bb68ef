"""The debug loop records its whole trajectory, adds pattern evidence, learns what matched no pattern."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK

from kope.agents import DebugConfig, DebugLoop
from kope.evaluate import Evaluator
from kope.memory import ExperienceStore
from kope.memory.recording import explanation_of, failure_text
from kope.models.replay import ScriptedModel

BROKEN = SCALE_GOOD.read_text().replace("* 2.0", "* 2.5")
EDIT = "<<<<<<< SEARCH\n* 2.5, mask=mask)\n=======\n* {value}, mask=mask)\n>>>>>>> REPLACE\n"


def test_explanations_and_signatures() -> None:
    reply = "The factor is off.\n```python\nx = 1\n```\n" + EDIT.format(value="2.0") + "PROBE bounds\nDone."
    assert explanation_of(reply) == "The factor is off. Done."


@pytest.mark.slow
def test_debug_records_its_trajectory_and_learns(evaluator: Evaluator, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN)
    config = DebugConfig(probes=False)
    with ExperienceStore.open(tmp_path / "m.db") as store:
        model = ScriptedModel(
            ["Try 2.7.\n" + EDIT.format(value="2.7"), "The multiplier was off.\n" + EDIT.format(value="2.0")]
        )
        report = DebugLoop(model, evaluator, config=config, store=store).run(SCALE_TASK, broken, tmp_path / "out.py")
        assert report.status == "repaired" and report.iterations == 2
        (run,) = store.runs()
        assert run.kind == "debug" and run.status == "repaired" and run.stop_reason == "repaired"
        assert run.start_version is not None and run.best_version is not None and run.summary
        decisions = store.decisions(run_id=run.id)
        assert [d.text for d in decisions] == ["Try 2.7.", "The multiplier was off."]
        assert all(d.parent_id == run.start_version and "* 2.5" in d.diff for d in decisions)
        scopes = [(e.scope, e.status) for e in store.evaluations(run_id=run.id)]
        assert scopes == [("visible", "fail"), ("visible", "fail"), ("visible", "pass"), ("all", "pass")]
        kinds = {(e.kind, e.src, e.dst) for e in store.edges(run_id=run.id)}
        assert ("fixed_by", run.start_version, run.best_version) in kinds
        assert ("alternative_of", run.best_version, decisions[0].child_id) in kinds
        (learned,) = store.learned()
        assert run.summary["learned"] == learned.pattern_id and "* 2.0" in learned.diff
        assert learned.title == "The multiplier was off." and learned.features.get("visible_fails") is True
        assert store.pattern_stats()[learned.pattern_id].fixed == 1
        assert store.signature_counts()[0][0].startswith("fail: ")

        again = ScriptedModel(["The multiplier was off, as before.\n" + EDIT.format(value="2.0")])
        loop = DebugLoop(again, evaluator, config=config, store=store)
        second = loop.run(SCALE_TASK, broken, tmp_path / "out2.py")
        assert second.status == "repaired" and second.hypotheses[0] == learned.pattern_id, "retrieval finds it"
        prompt = again.calls[0][1].content
        assert "## Experience" in prompt and learned.pattern_id in prompt
        assert len(store.learned()) == 1, "a repair that matched a pattern adds evidence, not a new pattern"
        stats = store.pattern_stats()[learned.pattern_id]
        assert (stats.applied, stats.fixed) == (2, 2)
        assert store.injections(run_id=max(r.id for r in store.runs())), "the injected experience is logged"
        assert failure_text(store_result_pass()) is None


def store_result_pass():  # type: ignore[no-untyped-def]
    from kope.protocol.results import EvalResult

    return EvalResult(status="pass", cases=[], cases_run="all", task="t", candidate="c", device="cpu", seed=0)
