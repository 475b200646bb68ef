"""Metrics over attempt rows: pass@k, tokens per success, integrity rejections, diagnosis accuracy."""

from __future__ import annotations

import pytest

from kope.bench.corpus import SuiteEntry
from kope.bench.harness import Attempt, select
from kope.bench.metrics import compute, diagnosis_accuracy, harness_seconds, pass_rates, tokens_per_success


def attempt(
    case: str,
    passed: bool,
    *,
    sample: int = 0,
    tokens: int = 0,
    label: str = "missing-mask",
    strategy: str = "debug",
    arm: str = "none",
    **extra: object,
) -> Attempt:
    return Attempt(
        case=case,
        label=label,
        task="op:x",
        strategy=strategy,
        arm=arm,
        sample=sample,
        model="m",
        outcome="repaired" if passed else "unrepaired",
        passed=passed,
        tokens=tokens,
        **extra,
    )  # type: ignore[arg-type]


def test_pass_at_k_is_the_unbiased_estimator_averaged_over_cases() -> None:
    rows = [
        attempt("a", True, sample=0),
        attempt("a", False, sample=1),
        attempt("a", False, sample=2),
        attempt("b", False, sample=0),
        attempt("b", False, sample=1),
        attempt("b", False, sample=2),
    ]
    p1, p2 = pass_rates(rows, 2)
    assert p1 == pytest.approx((1 / 3 + 0) / 2)
    assert p2 == pytest.approx((1 - 1 / 3 + 0) / 2)  # 1 - C(2,2)/C(3,2) for a
    _, p4 = pass_rates(rows, 4)
    assert p4 is None, "no case has 4 samples"
    assert pass_rates([], 1) == (None, None)


def test_tokens_per_success_counts_failed_attempts_too() -> None:
    rows = [attempt("a", True, tokens=100), attempt("b", False, tokens=300), attempt("c", True, tokens=200)]
    total, mean = tokens_per_success(rows)
    assert total == pytest.approx(300.0) and mean == pytest.approx(150.0)
    assert tokens_per_success([attempt("a", False, tokens=5)]) == (None, None)


def test_diagnosis_accuracy_uses_the_first_sample_of_debug_attempts() -> None:
    rows = [
        attempt("a", True, hypotheses=["missing-mask", "loop-bound"]),
        attempt("b", False, hypotheses=["loop-bound", "wrong-stride", "missing-mask"]),
        attempt("c", False, hypotheses=[]),
        attempt("a", True, sample=1, hypotheses=["loop-bound"]),
        attempt("d", False, strategy="regenerate"),
    ]
    top1, top3, counted = diagnosis_accuracy(rows)
    assert counted == 3 and top1 == pytest.approx(1 / 3) and top3 == pytest.approx(2 / 3)


def test_compute_per_arm_and_label_with_integrity_and_needs_model() -> None:
    rows = [
        attempt("a", True, label="missing-mask", tokens=10),
        attempt("b", False, label="loop-bound", tokens=30, integrity_rejected=True, accepted=True, arm="integrity"),
        attempt("a", False, label="missing-mask", arm="integrity"),
        Attempt(
            case="a",
            label="missing-mask",
            task="t",
            strategy="regenerate",
            arm="none",
            sample=0,
            model="m",
            outcome="needs-model",
        ),
        Attempt(
            case="z",
            label="loop-bound",
            task="t",
            strategy="debug",
            arm="none",
            sample=0,
            model="m",
            outcome="harness-error",
            error="boom",
        ),
    ]
    metrics = {(m.strategy, m.arm, m.label): m for m in compute(rows, k=1)}
    full = metrics[("debug", "none", "all")]
    assert full.cases == 2 and full.attempts == 2 and full.errors == 1 and full.pass_at_1 == 1.0
    assert metrics[("debug", "none", "missing-mask")].successes == 1
    gates_off = metrics[("debug", "integrity", "all")]
    assert gates_off.integrity_rejected == 1 and gates_off.accepted == 1 and gates_off.successes == 0
    assert gates_off.pass_at_1 == 0.0 and gates_off.tokens_per_success is None
    regen = metrics[("regenerate", "none", "all")]
    assert regen.needs_model and regen.pass_at_1 is None
    order = [(m.strategy, m.arm) for m in compute(rows) if m.label == "all"]
    assert order == [("debug", "none"), ("debug", "integrity"), ("regenerate", "none")]


def test_harness_seconds_and_sampling() -> None:
    row = attempt("a", True, job_s=10.0, wall_s=8.0, check_s=1.5)
    assert harness_seconds(row) == pytest.approx(0.5)
    entries = [
        SuiteEntry(id=f"{label}{i}", task="op:x", candidate="c.py", label=label)
        for label in ("a", "b")
        for i in range(5)
    ]
    assert [e.id for e in select(entries, every=2)] == ["a0", "a2", "a4", "b0", "b2", "b4"]
    assert [e.id for e in select(entries, every=2, limit=4)] == ["a0", "a2", "a4", "b0"]
