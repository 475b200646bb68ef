"""The diagnoser on a real near miss with every probe on; the `kope diagnose --json` contract; the layout probes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch
from conftest import FIXTURES, SCALE_GOOD, SCALE_TASK, TAXONOMY
from typer.testing import CliRunner

from kope.cases.task import Case, load_task
from kope.cli import app
from kope.diagnose.diagnoser import Diagnoser, square_cases
from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.inside.shapes import transform_inputs


def _grid_too_small(tmp_path: Path) -> Path:
    """tests/fixtures/good/scale.py launched on n // 256 programs: the tail of every case is never written."""
    good = "_scale_kernel[(triton.cdiv(n, 256),)]"
    source = SCALE_GOOD.read_text()
    assert good in source
    path = tmp_path / "scale_grid_floor.py"
    path.write_text(source.replace(good, "_scale_kernel[(n // 256,)]"))
    return path


def _one_case_task(tmp_path: Path) -> Path:
    """tests/fixtures/tasks/scale.py with one case (N = 300): every evaluation stays cheap."""
    task = tmp_path / "scale_one_case.py"
    task.write_text(SCALE_TASK.read_text().replace('return [{"N": 1000}, {"N": 1}, {"N": 257}]', 'return [{"N": 300}]'))
    assert task.read_text() != SCALE_TASK.read_text()
    return task


def test_diagnose_with_probes_names_the_grid_bug(evaluator: Evaluator, tmp_path: Path) -> None:
    said: list[str] = []
    diagnosis = Diagnoser(evaluator).diagnose(
        _one_case_task(tmp_path),
        _grid_too_small(tmp_path),
        options=EvalOptions(device="cpu", trials=1, timeout_s=30),
        probes=True,
        progress=said.append,
    )
    assert diagnosis.status == "fail" and diagnosis.blocks == [256]
    assert [c.passed for c in diagnosis.cases] == [False]
    probes = {p.name: p for p in diagnosis.probes}
    assert probes["bounds"].passed is True and diagnosis.bounds == [], "the mask keeps every access in bounds"
    assert probes["determinism"].passed is True
    sizes = {name: p.passed for name, p in probes.items() if name.startswith("size ")}
    assert sizes and True in sizes.values() and False in sizes.values(), sizes  # n = 256 is right, 255 is not
    assert any(name.startswith("inputs ") for name in probes)
    assert {"checking bounds", "rerunning for determinism", "trying structured inputs"} <= set(said)
    assert diagnosis.hypotheses[0].pattern == "grid-too-small", [h.pattern for h in diagnosis.hypotheses]
    assert diagnosis.features.measured() and diagnosis.evaluation is not None


def test_probes_past_their_budget_are_skipped_and_the_diagnosis_still_ranks(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A repair run gives the probes a share of its time: with none left, none runs, and the cues and the
    evaluation still rank the hypotheses."""
    said: list[str] = []
    diagnosis = Diagnoser(evaluator).diagnose(
        _one_case_task(tmp_path),
        _grid_too_small(tmp_path),
        options=EvalOptions(device="cpu", trials=1, timeout_s=30),
        probes=True,
        progress=said.append,
        probe_seconds=0.0,
    )
    assert diagnosis.status == "fail" and diagnosis.probes == [] and diagnosis.hypotheses
    assert "checking bounds: skipped (the repair's time budget)" in said
    cut = Diagnoser(evaluator).diagnose(  # a budget under the time limit: each probe runs with the time left
        _one_case_task(tmp_path),
        _grid_too_small(tmp_path),
        options=EvalOptions(device="cpu", trials=1, timeout_s=60),
        probes=True,
        probe_seconds=50.0,
    )
    assert {"bounds", "determinism"} <= {p.name for p in cut.probes}


def test_probe_sizes_the_reference_cannot_run_are_left_out_not_fatal(evaluator: Evaluator, tmp_path: Path) -> None:
    """The reference adds a fixed 300-element tensor (as a LayerNorm over a fixed width does): kope's size sweep
    around the block makes sizes where the reference itself fails; the diagnosis goes on without them."""
    task = _one_case_task(tmp_path)
    task.write_text(task.read_text().replace("return x * 2.0", "return x * 2.0 + torch.zeros(300)"))
    diagnosis = Diagnoser(evaluator).diagnose(
        task, _grid_too_small(tmp_path), options=EvalOptions(device="cpu", trials=1, timeout_s=30), probes=True
    )
    assert diagnosis.status == "fail" and [c.passed for c in diagnosis.cases] == [False]
    probes = {p.name for p in diagnosis.probes}
    assert "bounds" in probes and not any(name.startswith("size ") for name in probes), probes


@pytest.mark.slow
def test_diagnose_json_contract(tmp_path: Path) -> None:
    """DESIGN.md: `hypotheses`, a ranked list of {pattern, score, evidence} (taxonomy ids); `signature`: features."""
    args = [
        "diagnose",
        str(_one_case_task(tmp_path)),
        str(_grid_too_small(tmp_path)),
        "--json",
        "--device",
        "cpu",
        "--no-probes",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output  # 1: a diagnosis was made
    data = json.loads(result.output)
    assert data["status"] == "fail"
    hypotheses = data["hypotheses"]
    assert isinstance(hypotheses, list) and hypotheses
    for hypothesis in hypotheses:
        assert isinstance(hypothesis["pattern"], str) and isinstance(hypothesis["score"], int | float)
        assert isinstance(hypothesis["evidence"], list) and all(isinstance(e, str) for e in hypothesis["evidence"])
    assert hypotheses[0]["pattern"] == "grid-too-small" and set(h["pattern"] for h in hypotheses) <= set(TAXONOMY)
    scores = [h["score"] for h in hypotheses]
    assert scores == sorted(scores, reverse=True), "ranked, most likely first"
    signature = data["signature"]
    assert isinstance(signature, dict) and signature
    assert all(isinstance(k, str) for k in signature)
    assert all(v is None or isinstance(v, bool | int | float | str | list) for v in signature.values()), signature


def test_square_cases_equalise_the_sizes_and_keep_small_ones() -> None:
    visible = Case(name="v", overrides={"M": 128, "K": 96, "N": 112, "kernel_size": 3}, visible=True)
    square, symmetric = square_cases([visible, Case(name="h", overrides={"M": 1}, visible=False)])
    assert square.overrides == {"M": 96, "K": 96, "N": 96, "kernel_size": 3} == symmetric.overrides
    assert not square.visible and square.inputs is None
    assert symmetric.inputs is not None and symmetric.inputs.pattern == "symmetric"


def test_square_cases_need_two_different_sizes() -> None:
    assert square_cases([Case(name="v", overrides={"M": 64, "N": 64}, visible=True)]) == []
    assert square_cases([Case(name="v", overrides={"n": 1000}, visible=True)]) == []


def test_symmetric_inputs_keep_values_and_symmetrise_square_matrices() -> None:
    square, wide, vector = torch.randn(2, 4, 4), torch.randn(3, 5), torch.randn(7)
    out = transform_inputs([square, wide, vector], 1.0, 0.0, "symmetric")
    assert torch.allclose(out[0], out[0].transpose(-1, -2))
    assert torch.allclose(out[0], (square + square.transpose(-1, -2)) / 2)
    assert torch.equal(out[1], wide) and torch.equal(out[2], vector)


def test_a_diagnosis_covers_cases_derived_again_at_a_smaller_budget(evaluator: Evaluator, tmp_path: Path) -> None:
    """The evaluator derives the cases again when the first one outlives its limit in the interpreter; the
    diagnosis describes the cases that ran, which the caller's case list does not hold (issue 27's triage
    crashed on them)."""
    slow = FIXTURES / "slow"
    wrong = tmp_path / "slow_and_wrong.py"
    wrong.write_text((slow / "slow_when_large.py").read_text().replace("* 2.0", "* 3.0"))
    options = EvalOptions(trials=1, timeout_s=15, memory_mb=2048, max_elements=200_000)
    task = load_task(slow / "task_3d.py")
    # the derived cases under other names: still the evaluator's own (same sizes), so it may derive them again
    cases = [dataclasses.replace(c, name=f"mine-{c.name}") for c in evaluator.cases(task, options=options)]
    diagnosis = Diagnoser(evaluator).diagnose(task, wrong, options=options, cases=cases)
    assert diagnosis.status == "fail" and diagnosis.evaluation is not None
    assert diagnosis.evaluation.smaller_cases is not None
    assert [c.name for c in diagnosis.cases] == [r.name for r in diagnosis.evaluation.cases]
    assert not any(c.name.startswith("mine-") for c in diagnosis.cases)
