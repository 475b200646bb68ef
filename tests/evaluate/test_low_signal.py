"""Low-signal tasks: where the task's own inputs make the reference's output equal an input (a ReLU of
`torch.rand`), or near zero, kope derives cases from a widened input distribution and judges copy and
constant kernels there, with real Triton kernels in the interpreter."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import FIXTURES
from rich.console import Console
from typer.testing import CliRunner

from kope.cases.signal import mark_low_signal, quiet_output
from kope.cases.task import Case, load_task
from kope.cases.tolerance import Tolerance
from kope.cli import app
from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.inside.shapes import OUTLIER_FACTOR, output_signal, transform_inputs
from kope.protocol.probing import OutputSignal
from kope.render import eval_summary

SIGNAL = FIXTURES / "signal"
OPTIONS = EvalOptions(trials=1, timeout_s=60)


def test_a_relu_of_non_negative_inputs_is_low_signal_and_gets_a_widened_hidden_case(evaluator: Evaluator) -> None:
    task = load_task(SIGNAL / "relu.py")
    derivation = evaluator.derivation(task, OPTIONS)
    assert derivation.low_signal is not None
    assert "output 0 equals input 0" in derivation.low_signal.reason
    assert derivation.low_signal.extra_cases == ["widened"]
    widened = next(c for c in derivation.kept if c.kind == "widened")
    assert not widened.visible and widened.inputs is not None and widened.inputs.label() == "x*4-2"
    cases = evaluator.cases(task, options=OPTIONS)
    visible = [c for c in cases if c.visible]
    assert [c.name for c in visible] == ["original"] and visible[0].low_signal is not None
    assert [c.name for c in cases if c.widened] == ["widened"]
    assert not any(c.low_signal for c in cases if not c.visible)


@pytest.mark.parametrize("task", ["relu", "hardtanh"])
def test_an_honest_kernel_passes_and_a_copy_kernel_is_caught(evaluator: Evaluator, task: str) -> None:
    honest = evaluator.evaluate(SIGNAL / f"{task}.py", SIGNAL / f"{task}_good.py", options=OPTIONS)
    assert honest.status == "pass", [(f.rule, f.message) for f in honest.integrity.findings]
    assert honest.low_signal is not None and honest.low_signal.extra_cases == ["widened"]
    assert json.loads(honest.model_dump_json())["low_signal"]["extra_cases"] == ["widened"]
    copy = evaluator.evaluate(SIGNAL / f"{task}.py", SIGNAL / "copy.py", options=OPTIONS)
    assert copy.status in ("fail", "reject")
    widened = next(c for c in copy.cases if c.name == "widened")
    assert not widened.passed
    assert any(f.rule == "copy-kernel" for f in copy.integrity.findings), "judged a copy on the widened case"


def test_the_visible_case_alone_does_not_judge_copies_on_low_signal_inputs(evaluator: Evaluator) -> None:
    honest = evaluator.evaluate(SIGNAL / "relu.py", SIGNAL / "relu_good.py", options=OPTIONS, which="visible")
    assert honest.status == "pass" and honest.low_signal is not None and honest.low_signal.extra_cases == ["widened"]
    console = Console(record=True, width=300)
    console.print(eval_summary(honest))
    assert "low-signal task: on the task's own inputs, the reference's output 0 equals input 0" in console.export_text()


def test_a_near_zero_output_gets_a_larger_widening_and_a_zeros_kernel_fails(evaluator: Evaluator) -> None:
    derivation = evaluator.derivation(load_task(SIGNAL / "tiny.py"), OPTIONS)
    assert derivation.low_signal is not None and "below the tolerance" in derivation.low_signal.reason
    assert derivation.low_signal.extra_cases == ["widened-large"]
    reasons = {c.name: c.reason for c in derivation.candidates}
    assert "below the tolerance" in reasons["widened"]
    zeros = evaluator.evaluate(SIGNAL / "tiny.py", SIGNAL / "zeros.py", options=OPTIONS)
    assert zeros.status == "fail"
    assert [c.name for c in zeros.cases if not c.passed] == ["widened-large"]


def test_a_wide_clamp_needs_the_outliers(evaluator: Evaluator) -> None:
    derivation = evaluator.derivation(load_task(SIGNAL / "clamp.py"), OPTIONS)
    assert derivation.low_signal is not None and derivation.low_signal.extra_cases == ["widened-outliers"]
    reasons = {c.name: c.reason for c in derivation.candidates}
    assert "on these inputs too, the reference's output 0 equals input 0" in reasons["widened"]
    kept = next(c for c in derivation.kept if c.kind == "widened")
    assert kept.inputs is not None and kept.inputs.label() == "outliers*4-2"


def test_a_task_with_signed_inputs_is_not_low_signal(evaluator: Evaluator) -> None:
    derivation = evaluator.derivation(load_task(FIXTURES / "derive" / "rows.py"), OPTIONS)
    assert derivation.low_signal is None
    assert not any(c.kind == "widened" for c in derivation.candidates)


def test_output_signal_and_what_is_quiet() -> None:
    x = torch.rand(64, 8)
    (relu,) = output_signal([x], torch.relu(x))
    assert relu.input_error == 0.0 and relu.input_index == 0
    assert quiet_output(relu) is not None and "equals input 0" in (quiet_output(relu) or "")
    (signed,) = output_signal([x - 0.5], torch.relu(x - 0.5))
    assert signed.input_error is not None and signed.input_error > 0.1 and quiet_output(signed) is None
    (constant,) = output_signal([x], torch.full((3,), 2.0))
    assert "constant" in (quiet_output(constant) or "")
    scalar = OutputSignal(output=0, dtype="float32", numel=1, max_abs=2.0, spread=0.0)
    assert quiet_output(scalar) is None, "one value is not 'constant'"
    tiny = OutputSignal(output=1, dtype="float16", numel=4, max_abs=5e-3, spread=5e-3)
    assert "below the tolerance" in (quiet_output(tiny) or "")
    small = OutputSignal(output=0, dtype="float32", numel=4, max_abs=5e-3, spread=5e-3)
    assert quiet_output(small) is None, "above float32's default atol of 1e-4"
    assert "below the tolerance" in (quiet_output(small, {"float32": Tolerance(atol=1e-2, rtol=1e-2)}) or "")
    assert output_signal([x], torch.tensor([float("nan"), 1.0])) == []
    assert output_signal([x], torch.arange(4)) == [], "integer outputs are compared exactly, never low-signal"


def test_the_outliers_pattern_widens_both_ways() -> None:
    x = torch.linspace(0.5, 1.0, 244).reshape(4, 61)
    (widened,) = transform_inputs([x], 4.0, -2.0, "outliers")
    flat = widened.reshape(-1)
    assert flat.min() < -20 and flat.max() > 15
    assert float(flat[0]) == pytest.approx(float(x.reshape(-1)[0]) * 4 * OUTLIER_FACTOR - 2, rel=1e-5)
    assert float(flat[61]) == pytest.approx(float(x.reshape(-1)[61]) * -4 * OUTLIER_FACTOR - 2, rel=1e-5)
    assert float(torch.exp(flat.max())) < float("inf"), "outliers stay where exp is finite in float32"
    assert float(flat[1]) == pytest.approx(float(x.reshape(-1)[1]) * 4 - 2, rel=1e-5)


def test_marking_needs_a_kept_widened_case() -> None:
    from kope.cases.derivation import Derivation

    plain = [Case(name="original"), Case(name="odd", visible=False)]
    assert mark_low_signal(plain, Derivation(task="t", device="cpu", max_elements=1)) == plain


@pytest.mark.slow
def test_kope_cases_marks_the_low_signal_and_the_widened_cases() -> None:
    result = CliRunner().invoke(app, ["cases", str(SIGNAL / "relu.py"), "--json", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    rows = {c["name"]: c for c in payload["cases"]}
    assert "equals input 0" in rows["original"]["low_signal"] and rows["original"]["visible"]
    assert rows["widened"]["widened"] and not rows["widened"]["visible"]
    assert rows["widened"]["inputs"] == {"scale": 4.0, "shift": -2.0}
    assert payload["derivation"]["low_signal"]["extra_cases"] == ["widened"]


def test_a_shift_keeps_the_zero_structure_of_a_triangular_input_and_moves_a_dense_one() -> None:
    upper = torch.triu(torch.rand(8, 8) + 0.1)
    (moved,) = transform_inputs([upper], 1.0, -0.5)
    assert torch.equal(torch.tril(moved, -1), torch.zeros(8, 8)), "the zero triangle the task promises stays"
    assert torch.allclose(torch.triu(moved), torch.triu(upper - 0.5))
    dense = torch.rand(8, 8) + 0.1
    (shifted,) = transform_inputs([dense], 1.0, -0.5)
    assert torch.allclose(shifted, dense - 0.5)
    (ones,) = transform_inputs([upper], 1.0, 1.0, "ones")
    assert torch.equal(ones, torch.full((8, 8), 2.0)), "a pattern that replaces the values has no zeros to keep"
