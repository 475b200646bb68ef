"""What every loop shares: the guards' stop reasons, the score of a version, the transcript."""

from __future__ import annotations

import json
from pathlib import Path

from kope.loop import Guards, LoopLimits, Transcript, version_score
from kope.protocol.results import CaseResult, EvalError, EvalResult


def result(status: str, *wrong: float) -> EvalResult:
    cases = [
        CaseResult(name=f"c{i}", overrides={}, visible=True, passed=not f, mismatch_fraction=f, max_rel_err=f)
        for i, f in enumerate(wrong or (0.0,))
    ]
    error = EvalError(kind="runtime", message="boom") if status == "error" else None
    return EvalResult(
        status=status,
        error=error,
        cases=cases,
        cases_run="all",
        task="t",
        candidate="c",  # type: ignore[arg-type]
        device="cpu",
        seed=0,
    )


def test_version_score_orders_error_wrong_rejected_right() -> None:
    scores = [
        version_score(r)
        for r in (
            result("error", 1.0),
            result("fail", 0.5, 0.5),
            result("fail", 0.1, 0.0),
            result("reject"),
            result("pass"),
        )
    ]
    assert scores == sorted(scores, reverse=True) and scores[-1] == (0, 0.0, 0.0) and scores[0][0] == 3
    assert scores[2] == (2, 0.05, 0.1), "the mismatch is averaged over every case, the error is the worst"


def test_a_version_that_runs_to_outputs_of_the_wrong_shape_outranks_one_that_stops_before() -> None:
    """A search mending one rule of several (a compile refusal, then an output's dtype, then its shape) builds on
    each: a version whose outputs came back of the wrong dtype is closer than one that raised on the way, and one
    whose outputs' shape alone is off (the dtype is checked first) closer still."""
    raised, typed, shaped = result("error", 1.0), result("error", 1.0), result("error", 1.0)
    typed.error = EvalError(kind="shape", message="output: dtype torch.bfloat16 where the reference has torch.float32")
    shaped.error = EvalError(kind="shape", message="output: shape (320, 160) where the reference has (160, 320)")
    assert version_score(raised) == (3, 1.0, 0.0) and version_score(typed) == (3, 0.5, 0.0)
    assert version_score(result("fail", 1.0)) < version_score(shaped) < version_score(typed) < version_score(raised)


def test_guards_give_each_stop_reason() -> None:
    guards = Guards(LoopLimits(max_iterations=2, max_tokens=100, patience=2, repeat_limit=2))
    assert guards.before_call(1, 99) is None
    assert guards.before_call(2, 0) == "iteration-limit" and guards.before_call(0, 100) == "token-budget"
    assert Guards(LoopLimits(max_seconds=0.0)).before_call(0, 0) == "time-budget"
    assert guards.improved((2, 0.5, 1.0)) and guards.best == (2, 0.5, 1.0)
    assert not guards.improved((2, 0.6, 1.0)) and guards.after_step() is None
    guards.no_progress()
    assert guards.after_step() == "no-progress" and guards.best == (2, 0.5, 1.0), "the best is kept"
    assert guards.improved((1, 0.0, 0.0)) and guards.after_step() is None
    guards.failure("a")
    guards.failure("b")
    assert guards.after_step() is None
    guards.failure("b")
    assert guards.after_step() == "repeated-failure"


def test_transcript_writes_one_json_object_per_event(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "t.jsonl"
    log = Transcript(path)
    log.write("start", task=Path("x.py"))
    log.write("end", n=1)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "end"] and events[0]["task"] == "x.py" and "time" in events[1]
    Transcript(None).write("nothing")  # no file: nothing written, no error


def test_a_version_with_misplaced_nans_ranks_below_a_finite_wrong_one() -> None:
    """The measured errors skip NaN and infinite elements: a version that made every element infinite reads as
    relative error 0, and must not rank above one that is finitely wrong everywhere (it is no closer)."""
    from kope.protocol.results import OutputDiff

    finite = result("fail", 1.0)
    nans = result("fail", 1.0)
    nans.cases[0].max_rel_err = 0.0
    diff = OutputDiff(index=0, shape=[4], dtype="float32", numel=4, mismatch_count=4, max_abs_err=0.0,
                      max_rel_err=0.0, nan_mismatch=4, atol=1e-5, rtol=1e-5)  # fmt: skip
    nans.cases[0].outputs = [diff]
    assert version_score(nans) > version_score(finite)


def test_a_version_whose_output_holds_one_value_counts_every_element_wrong() -> None:
    """ReLU of a zeroed accumulator is right wherever the reference's ReLU is zero: 45% wrong, but it computes
    nothing, and must rank below a version that computes with the inputs, wrong on 55% of them."""
    from kope.protocol.results import OutputDiff

    def diff(wrong: int, constant: float | None) -> OutputDiff:
        return OutputDiff(index=0, shape=[100], dtype="float32", numel=100, mismatch_count=wrong, max_abs_err=1.0,
                          max_rel_err=1.0, atol=1e-5, rtol=1e-5, constant=constant)  # fmt: skip

    computing, zeroed = result("fail", 0.55), result("fail", 0.45)
    computing.cases[0].outputs = [diff(55, None)]
    zeroed.cases[0].outputs = [diff(45, 0.0)]
    assert version_score(zeroed)[:2] == (2, 1.0) and version_score(zeroed) > version_score(computing)
    two = result("fail", 0.3)  # two outputs of 100: the first right, the second zeroed (30 of its 100 wrong)
    two.cases[0].outputs = [diff(0, None), diff(30, 0.0).model_copy(update={"index": 1})]
    assert version_score(two)[1] == 0.5  # the zeroed output counts whole, the right one not at all
