"""The debug loop driven by scripted models: every guard, every stop reason, acceptance, replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK

from kope.agents import DebugConfig, DebugLoop, LoopLimits
from kope.evaluate import EvalOptions, Evaluator
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


def test_repairs_with_a_correct_edit(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    model = ScriptedModel([FIX])
    report = run(evaluator, model, broken, tmp_path)
    assert report.status == "repaired" and report.stop_reason == "repaired" and report.iterations == 1
    assert (tmp_path / "out.py").read_text() == SCALE_GOOD.read_text()
    assert report.final == {"status": "pass", "cases_passed": 3, "cases": 3, "integrity": "clean"}
    assert report.tokens.prompt > 0 and report.tokens.completion > 0
    prompt = model.calls[0][1].content
    assert "broken" not in prompt and "* 2.5" in prompt and "class Model(nn.Module)" in prompt
    events = [json.loads(line)["event"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert events[0] == "start" and "prompt" in events and "reply" in events and events[-1] == "end"


def test_iteration_limit_and_token_budget(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    drifting = ScriptedModel([wrong_factor("2.6"), wrong_factor("2.7"), wrong_factor("2.8")])
    limited = run(evaluator, drifting, broken, tmp_path, max_iterations=2)
    assert limited.status == "unrepaired" and limited.stop_reason == "iteration-limit" and limited.iterations == 2
    assert (tmp_path / "out.py").read_text() == BROKEN, "the best version (the original, 2.5 is closest) is kept"
    spent = run(evaluator, ScriptedModel([wrong_factor("2.6")] * 5), broken, tmp_path, max_tokens=1)
    assert spent.stop_reason == "token-budget" and spent.iterations == 1


def test_time_budget(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    report = run(evaluator, ScriptedModel([FIX]), broken, tmp_path, max_seconds=0.001)
    assert report.stop_reason == "time-budget" and report.iterations == 0


def test_no_progress_and_feedback(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    model = ScriptedModel(["I am not sure what is wrong here."])
    report = run(evaluator, model, broken, tmp_path, patience=2)
    assert report.stop_reason == "no-progress" and report.iterations == 2
    assert "Your reply had no edit" in model.calls[1][1].content


def test_repeated_failure(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    model = ScriptedModel([wrong_factor("3.0"), wrong_factor("3.5"), wrong_factor("4.0"), wrong_factor("4.5")])
    report = run(evaluator, model, broken, tmp_path, repeat_limit=2, patience=10)
    assert report.stop_reason == "repeated-failure"


def test_oscillation_is_refused(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    back = "<<<<<<< SEARCH\n* 2.6, mask=mask)\n=======\n* 2.5, mask=mask)\n>>>>>>> REPLACE\n"
    model = ScriptedModel([wrong_factor("2.6"), back, FIX])
    report = run(evaluator, model, broken, tmp_path)
    actions = [step.action for step in report.steps]
    assert "oscillation" in actions or "edit-failed" in actions
    assert report.status == "repaired"


def test_regression_is_reverted_and_edit_failures_explained(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    worse = "```python\nclass ModelNew(:\n```\n"
    missing = "<<<<<<< SEARCH\nthis line is not there\n=======\nx = 1\n>>>>>>> REPLACE\n"
    model = ScriptedModel([worse, missing, FIX])
    report = run(evaluator, model, broken, tmp_path)
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
    cheat = "<<<<<<< SEARCH\n        return launch(x.contiguous())\n=======\n        launch(x.contiguous())\n        return x * 2.0\n>>>>>>> REPLACE\n"
    model = ScriptedModel([cheat, "no idea"])
    report = run(evaluator, model, broken, tmp_path, max_iterations=2)
    assert report.status == "rejected" and report.rejected_versions == 1
    assert "integrity gates rejected" in model.calls[1][1].content


def test_replay_reproduces_a_recorded_run(evaluator: Evaluator, broken: Path, tmp_path: Path) -> None:
    recording = tmp_path / "run.jsonl"
    original = run(evaluator, RecordingModel(ScriptedModel([wrong_factor("2.6"), FIX]), recording), broken, tmp_path)
    replayed = run(evaluator, ReplayModel(recording, strict=True), broken, tmp_path)
    assert original.status == replayed.status == "repaired"
    assert [(s.action, s.outcome, s.tokens) for s in original.steps] == [
        (s.action, s.outcome, s.tokens) for s in replayed.steps
    ]


class _MarkerRemover:
    """The real evaluator, except that it removes `marker` before evaluating `final` (the loop's output file)."""

    def __init__(self, evaluator: Evaluator, marker: Path, final: Path) -> None:
        self._evaluator, self._marker, self._final = evaluator, marker, final

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._evaluator, name)

    def evaluate(self, task, candidate, **kwargs):  # type: ignore[no-untyped-def]
        if Path(candidate) == self._final:
            self._marker.unlink(missing_ok=True)
        return self._evaluator.evaluate(task, candidate, **kwargs)


def test_a_version_that_passes_once_and_fails_again_is_not_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    # Right while a file exists, wrong once it is gone: the acceptance evaluation passes and the final
    # one fails, as a kernel whose outputs depend on memory it does not own can.
    marker = tmp_path / "marker"
    marker.write_text("")
    flaky = tmp_path / "flaky.py"
    flaky.write_text("import pathlib\n" + SCALE_GOOD.read_text().replace(
        "tl.load(x_ptr + offsets, mask=mask) * 2.0", "tl.load(x_ptr + offsets, mask=mask) * FACTOR"
    ) + f"\nFACTOR = 2.0 if pathlib.Path({str(marker)!r}).exists() else 2.5\n")
    out = tmp_path / "out.py"
    loop = DebugLoop(ScriptedModel([]), _MarkerRemover(evaluator, marker, out),  # type: ignore[arg-type]
                     # it reads a file of the test's: no gates, and no OS sandbox (which would hide the file)
                     config=DebugConfig(probes=False, options=EvalOptions(integrity=False, sandbox="off")),
                     transcript=tmp_path / "t.jsonl")
    report = loop.run(SCALE_TASK, flaky, out)
    assert report.status == "unrepaired" and report.stop_reason == "unstable" and report.iterations == 0
    assert report.final is not None and report.final["status"] == "fail"
    events = [json.loads(line)["event"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert events[-3:] == ["acceptance", "unstable", "end"]
