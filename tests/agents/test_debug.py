"""The debug loop driven by scripted models: every guard, every stop reason, acceptance, replay.

The loop's control runs on the scripted environment (milliseconds); a repair, a rejection and an
instrumentation request run on the real sandboxed evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK

from kope.agents import DebugConfig, DebugLoop, LoopLimits
from kope.agents.environment import FakeEnvironment
from kope.evaluate import Evaluator
from kope.knowledge.retrieval import Hypothesis
from kope.models.replay import RecordingModel, ReplayModel, ScriptedModel

BROKEN = SCALE_GOOD.read_text().replace("* 2.0", "* 2.5")
FIX = """The factor is wrong.
<<<<<<< SEARCH
tl.load(x_ptr + offsets, mask=mask) * 2.5
=======
tl.load(x_ptr + offsets, mask=mask) * 2.0
>>>>>>> REPLACE
"""


def wrong_factor(value: str) -> str:
    return f"<<<<<<< SEARCH\n* 2.5, mask=mask)\n=======\n* {value}, mask=mask)\n>>>>>>> REPLACE\n"


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken.py"
    path.write_text(BROKEN)
    return path


def run(evaluator: Evaluator, model, broken: Path, tmp_path: Path, **limits: float):  # type: ignore[no-untyped-def]
    config = DebugConfig(limits=LoopLimits(**limits), probes=False)  # type: ignore[arg-type]
    loop = DebugLoop(model, evaluator, config=config, transcript=tmp_path / "t.jsonl")
    return loop.run(SCALE_TASK, broken, tmp_path / "out.py")


def scripted() -> FakeEnvironment:
    """The scale kernel's versions as the real evaluator judges them: the factor 2.0 is right, others wrong
    by how far they are from it; a file that does not parse does not run."""
    return FakeEnvironment(
        {"* 2.0": "pass", "* 2.5": 0.25, "* 2.6": 0.3, "* 2.7": 0.35, "* 2.8": 0.4, "ModelNew(:": "error"}
    )


def fake_run(model, broken: Path, tmp_path: Path, env: FakeEnvironment | None = None, **limits: float):  # type: ignore[no-untyped-def]
    config = DebugConfig(limits=LoopLimits(**limits), probes=False)  # type: ignore[arg-type]
    loop = DebugLoop(model, env or scripted(), config=config, transcript=tmp_path / "t.jsonl")
    return loop.run(SCALE_TASK, broken, tmp_path / "out.py")


def test_repairs_with_a_correct_edit(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    model = ScriptedModel([FIX])
    report = run(evaluator, model, broken, tmp_path)
    assert report.status == "repaired" and report.stop_reason == "repaired" and report.iterations == 1
    assert (tmp_path / "out.py").read_text() == SCALE_GOOD.read_text()
    assert report.final.model_dump() == {
        "status": "pass",
        "cases_passed": 3,
        "cases": 3,
        "not_judged": 0,
        "integrity": "clean",
    }
    assert report.tokens.prompt > 0 and report.tokens.completion > 0
    prompt = model.calls[0][1].content
    assert "broken" not in prompt and "* 2.5" in prompt and "class Model(nn.Module)" in prompt
    events = [json.loads(line)["event"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert events[0] == "start" and "prompt" in events and "reply" in events and events[-1] == "end"


@pytest.mark.slow
def test_a_kernel_right_as_given_ends_pass_unchanged(tmp_path: Path) -> None:
    """Not `repaired`: nothing was wrong and nothing changed (a model is never asked)."""
    right = tmp_path / "right.py"
    right.write_text(SCALE_GOOD.read_text())
    model = ScriptedModel([FIX])
    report = fake_run(model, right, tmp_path)
    assert (report.status, report.stop_reason, report.iterations) == ("pass", "already-right", 0)
    assert (tmp_path / "out.py").read_text() == right.read_text() and not model.calls


def test_iteration_limit_and_token_budget(broken: Path, tmp_path: Path) -> None:
    drifting = ScriptedModel([wrong_factor("2.6"), wrong_factor("2.7"), wrong_factor("2.8")])
    limited = fake_run(drifting, broken, tmp_path, max_iterations=2)
    assert limited.status == "unrepaired" and limited.stop_reason == "iteration-limit" and limited.iterations == 2
    assert (tmp_path / "out.py").read_text() == BROKEN, "the best version (the original, 2.5 is closest) is kept"
    spent = fake_run(ScriptedModel([wrong_factor("2.6")] * 5), broken, tmp_path, max_tokens=1)
    assert spent.stop_reason == "token-budget" and spent.iterations == 1


def test_time_budget(broken: Path, tmp_path: Path) -> None:
    report = fake_run(ScriptedModel([FIX]), broken, tmp_path, max_seconds=0.0)
    assert report.stop_reason == "time-budget" and report.iterations == 0


@pytest.mark.slow
def test_no_progress_and_feedback(broken: Path, tmp_path: Path) -> None:
    model = ScriptedModel(["I am not sure what is wrong here."])
    report = fake_run(model, broken, tmp_path, patience=2)
    assert report.stop_reason == "no-progress" and report.iterations == 2
    assert "Your reply had no edit" in model.calls[1][1].content


def test_repeated_failure(broken: Path, tmp_path: Path) -> None:
    model = ScriptedModel([wrong_factor("3.0"), wrong_factor("3.5"), wrong_factor("4.0"), wrong_factor("4.5")])
    report = fake_run(model, broken, tmp_path, repeat_limit=2, patience=10)
    assert report.stop_reason == "repeated-failure"


def test_oscillation_is_refused(broken: Path, tmp_path: Path) -> None:
    back = "<<<<<<< SEARCH\n* 2.6, mask=mask)\n=======\n* 2.5, mask=mask)\n>>>>>>> REPLACE\n"
    model = ScriptedModel([wrong_factor("2.6"), back, FIX])
    report = fake_run(model, broken, tmp_path)
    actions = [step.action for step in report.steps]
    assert "oscillation" in actions or "edit-failed" in actions
    assert report.status == "repaired"


def test_regression_is_reverted_and_edit_failures_explained(broken: Path, tmp_path: Path) -> None:
    worse = "```python\nclass ModelNew(:\n```\n"
    missing = "<<<<<<< SEARCH\nthis line is not there\n=======\nx = 1\n>>>>>>> REPLACE\n"
    model = ScriptedModel([worse, missing, FIX])
    report = fake_run(model, broken, tmp_path)
    assert [s.action for s in report.steps] == ["edit", "edit-failed", "edit"]
    assert "reverted to the best version" in model.calls[1][1].content
    assert "did not apply" in model.calls[2][1].content
    assert "* 2.5" in model.calls[2][1].content, "the model works from the best version again"
    assert report.status == "repaired"


def test_instrumentation_request_is_answered(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    line = next(i for i, text in enumerate(BROKEN.splitlines(), start=1) if "mask = offsets < n" in text)
    model = ScriptedModel([f"Let me look.\nTRACE kernel=_scale_kernel line={line + 1} pid=0\n", FIX])
    report = run(evaluator, model, broken, tmp_path)
    assert report.steps[0].action == "instrumentation" and report.status == "repaired"
    second = model.calls[1][1].content
    assert "Instrumentation you asked for" in second and "offsets" in second and "min 0, max 255" in second


def test_cheating_fix_is_rejected(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    cheat = (
        "<<<<<<< SEARCH\n        return launch(x.contiguous())\n=======\n        launch(x.contiguous())\n        "
        "return x * 2.0\n>>>>>>> REPLACE\n"
    )
    model = ScriptedModel([cheat, "no idea"])
    report = run(evaluator, model, broken, tmp_path, max_iterations=2)
    assert report.status == "rejected" and report.rejected_versions == 1
    assert "integrity gates rejected" in model.calls[1][1].content


def test_replay_reproduces_a_recorded_run(broken: Path, tmp_path: Path) -> None:
    recording = tmp_path / "run.jsonl"
    original = fake_run(RecordingModel(ScriptedModel([wrong_factor("2.6"), FIX]), recording), broken, tmp_path)
    replayed = fake_run(ReplayModel(recording, strict=True), broken, tmp_path)
    assert original.status == replayed.status == "repaired"
    assert [(s.action, s.outcome, s.tokens) for s in original.steps] == [
        (s.action, s.outcome, s.tokens) for s in replayed.steps
    ]


def test_a_version_that_passes_once_and_fails_again_is_not_repaired(broken: Path, tmp_path: Path) -> None:
    # Right when it is diagnosed and accepted, wrong on the final evaluation, as a kernel whose outputs
    # depend on memory it does not own can be.
    flaky = FakeEnvironment({"* 2.5": ["pass", "pass", 0.5]})
    report = fake_run(ScriptedModel([]), broken, tmp_path, env=flaky)
    assert report.status == "unrepaired" and report.stop_reason == "unstable" and report.iterations == 0
    assert report.final.status == "fail" and len(flaky.evaluated) == 3
    events = [json.loads(line)["event"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert events[-3:] == ["acceptance", "unstable", "end"]


def test_a_version_right_on_the_shown_case_only_is_not_repaired(broken: Path, tmp_path: Path) -> None:
    env = FakeEnvironment({"* 2.5": "hidden"})
    model = ScriptedModel(["no idea"])
    report = fake_run(model, broken, tmp_path, env=env, max_iterations=1)
    assert report.status == "unrepaired" and report.final.model_dump() == {
        "status": "fail",
        "cases_passed": 1,
        "cases": 3,
        "not_judged": 0,
        "integrity": "clean",
    }
    assert "fails 2 hidden case(s)" in model.calls[0][1].content


UNGRIDDED = SCALE_GOOD.read_text().replace("triton.cdiv(n, 256)", "n // 256")
GRID = Hypothesis(pattern="grid-too-small", score=1.0, recipe="grid-ceil-div")


def test_recipes_come_before_the_model_when_asked(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(UNGRIDDED)
    env = FakeEnvironment({"n // 256": 0.2, "cdiv": "pass"}, hypotheses=[GRID])
    model = ScriptedModel(["no idea"])
    config = DebugConfig(probes=False, recipes_first=True)
    report = DebugLoop(model, env, config=config).run(SCALE_TASK, broken, tmp_path / "out.py")
    assert report.status == "repaired" and [s.model for s in report.steps] == ["offline"] and not model.calls
    assert report.tokens.total == 0 and "triton.cdiv(n, 256)" in (tmp_path / "out.py").read_text()

    asked = DebugLoop(model, env, config=DebugConfig(probes=False, limits=LoopLimits(max_iterations=1)))
    assert asked.run(SCALE_TASK, broken, tmp_path / "out.py").steps[0].model == "scripted" and model.calls


def test_offline_recipes_alone_repair_or_stop_when_nothing_applies(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(UNGRIDDED)
    env = FakeEnvironment({"n // 256": 0.2, "cdiv": "pass"}, hypotheses=[GRID])
    repaired = DebugLoop(None, env, config=DebugConfig(probes=False)).run(SCALE_TASK, broken, tmp_path / "out.py")
    assert repaired.status == "repaired" and repaired.model == "offline" and repaired.iterations == 1
    nothing = FakeEnvironment({"n // 256": 0.2}, hypotheses=[GRID.model_copy(update={"recipe": None})])
    stopped = DebugLoop(None, nothing, config=DebugConfig(probes=False)).run(SCALE_TASK, broken, tmp_path / "o.py")
    assert stopped.status == "unrepaired" and stopped.stop_reason == "model-exhausted" and stopped.iterations == 1


def test_the_json_report_keeps_the_kope_debug_keys(broken: Path, tmp_path: Path) -> None:
    report = fake_run(ScriptedModel([FIX]), broken, tmp_path)
    printed = json.loads(report.model_dump_json(exclude={"steps", "search"}))  # what `kope debug --json` prints
    assert set(printed) == {
        "status",
        "iterations",
        "tokens",
        "output",
        "stop_reason",
        "task",
        "candidate",
        "model",
        "transcript",
        "seconds",
        "rejected_versions",
        "final",
        "hypotheses",
        "sandbox",
        "evaluations",
        "smaller_cases",
    }
    assert set(printed["tokens"]) == {"prompt", "completion"}
    assert printed["final"] == {"status": "pass", "cases_passed": 3, "cases": 3, "not_judged": 0, "integrity": "clean"}
    assert printed["status"] == "repaired" and printed["stop_reason"] == "repaired"


def test_the_fake_environment_plays_its_script(tmp_path: Path) -> None:
    env = FakeEnvironment({"good": "pass", "cheat": "reject", "crash": "error", "flaky": ["pass", 0.5]})
    cases = env.start(None, tmp_path / "out.py")  # type: ignore[arg-type]
    assert [c.visible for c in cases] == [True, False, False]
    assert env.evaluate("good", cases).status == "pass" and env.evaluate("bad", cases).status == "fail"
    rejected = env.evaluate("cheat", cases)
    assert rejected.status == "reject" and all(c.passed for c in rejected.cases)
    assert env.evaluate("crash", cases).error is not None
    assert [env.evaluate("flaky", cases).status for _ in range(3)] == ["pass", "fail", "fail"]
    assert len(env.evaluated) == 7
