"""Derived cases: kope finds what sizes a single-shape task's inputs and derives valid, varied cases."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import FIXTURES, SCALE_GOOD, SCALE_TASK
from rich.console import Console
from safetensors.numpy import load_file
from test_task import KERNELBENCH_STYLE
from typer.testing import CliRunner

from kope.cases.derivation import Derivation, distinct_shapes
from kope.cases.derive import derive
from kope.cases.render import derivation_report
from kope.cases.sizes import CPU_MAX_ELEMENTS, odd_size, prime_sizes, size_roots
from kope.cases.task import build_cases, load_task
from kope.cli import app
from kope.errors import ReferenceError_
from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.cache import reference_key
from kope.ops import get_op
from kope.protocol.probing import ShapeProbe, ShapeProbeResult

DERIVE = FIXTURES / "derive"
ROWS = DERIVE / "rows.py"


def derivation(evaluator: Evaluator, path: Path, **options: object) -> Derivation:
    return evaluator.derivation(load_task(path), EvalOptions(**options))


def kept(result: Derivation) -> dict[str, dict[str, object]]:
    return {c.name: c.overrides for c in result.kept}


def test_a_task_that_fits_keeps_its_own_sizes_visible_and_derives_hidden_variants(evaluator: Evaluator) -> None:
    result = derivation(evaluator, ROWS)
    assert result.error is None and result.probe == "meta"
    assert {p.name: p.sizes_inputs for p in result.parameters} == {"batch": True, "dim": True}
    assert kept(result) == {
        "original": {},
        "odd": {"batch": 7, "dim": 299},
        "prime": {"batch": 7, "dim": 239},
        "one": {"batch": 1, "dim": 1},
        "scaled": {},
        "shifted": {},
    }
    assert [c.name for c in result.kept if c.visible] == ["original"]
    assert {c.name: c.inputs is not None for c in result.kept} == {
        "original": False,
        "odd": False,
        "prime": False,
        "one": False,
        "scaled": True,
        "shifted": True,
    }
    cases = evaluator.cases(load_task(ROWS))
    assert [(c.name, c.visible) for c in cases][:2] == [("original", True), ("odd", False)]
    assert sum(c.visible for c in cases) == 1 and len(cases) == 6
    assert evaluator.derivation(load_task(ROWS), EvalOptions()) is result, "cached per task, device and budget"


def test_baked_in_shape_passes_the_visible_case_and_fails_a_hidden_one(evaluator: Evaluator) -> None:
    options = EvalOptions(trials=1, timeout_s=30)
    good = evaluator.evaluate(ROWS, DERIVE / "rows_good.py", options=options)
    assert good.status == "pass", [(c.name, c.error) for c in good.cases if not c.passed]
    assert len(good.cases) == 6
    baked = evaluator.evaluate(ROWS, DERIVE / "rows_baked.py", options=options)
    visible = [c for c in baked.cases if c.visible]
    hidden = [c for c in baked.cases if not c.visible]
    assert [c.name for c in visible] == ["original"] and visible[0].passed
    assert not all(c.passed for c in hidden) and baked.status != "pass"
    data = json.loads(baked.model_dump_json())
    assert [(c["name"], c["visible"]) for c in data["cases"]][:2] == [("original", True), ("odd", False)]
    assert data["cases"][1]["overrides"] == {"batch": 7, "dim": 299}
    assert data["cases"][4]["inputs"] == {"scale": 4.0, "shift": 0.0}


def test_kernelbench_style_globals_are_sized_or_left_alone(evaluator: Evaluator) -> None:
    result = derivation(evaluator, DERIVE / "pool.py")
    assert result.error is None
    parameters = {p.name: p for p in result.parameters}
    assert {name for name, p in parameters.items() if p.sizes_inputs} == {"batch_size", "input_shape"}
    assert parameters["kernel_size"].reason == "does not change the input shapes"
    assert parameters["unused"].reason == "does not change the input shapes"
    assert parameters["dim"].reason == "not a positive size"
    assert "scale" not in parameters, "floats are not sizes"
    assert result.original_numel == 16 * 8 * 4000 and result.original_output_numel == 16 * 8
    names = kept(result)
    assert {"shrunk", "odd", "prime", "one-partial", "scaled", "shifted"} == set(names)
    assert [c.name for c in result.kept if c.visible] == ["shrunk"]
    for case in result.kept:
        assert set(case.overrides) == {"batch_size", "input_shape"}
        assert case.numel is not None and case.numel <= CPU_MAX_ELEMENTS
    dropped = {c.name: c.reason for c in result.candidates if not c.kept}
    assert "over the budget" in dropped["original"]
    assert "Output size is too small" in dropped["one"] or "too small" in dropped["one"]
    assert names["one-partial"]["batch_size"] == 1 and names["one-partial"]["input_shape"][:1] == [1]


def test_an_expression_a_tuple_an_axis_and_an_unused_name(tmp_path: Path, evaluator: Evaluator) -> None:
    path = tmp_path / "kernelbench_style.py"
    path.write_text(KERNELBENCH_STYLE)
    result = derivation(evaluator, path)
    reasons = {p.name: p.reason for p in result.parameters}
    assert reasons == {
        "batch_size": "sizes input 0 dim 0",
        "dim": "sizes input 0 dim 1",
        "kernel": "does not change the input shapes",
        "axis": "not a positive size",
        "unused_name": "does not change the input shapes",
    }
    assert kept(result)["original"] == {} and kept(result)["odd"] == {"batch_size": 15, "dim": 4095}
    assert result.original_numel == 16 * 4096 and len(result.kept) == 6


def test_the_budget_shrinks_and_every_variant_fits(evaluator: Evaluator) -> None:
    result = derivation(evaluator, ROWS, max_elements=1000)
    assert [c.name for c in result.kept if c.visible] == ["shrunk"]
    assert all(max(c.numel or 0, c.output_numel or 0) <= 1000 for c in result.kept)
    assert kept(result)["shrunk"] == {"batch": 8, "dim": 124}, "small sizes kept, the large one shrunk to fit"


def test_get_inputs_the_meta_device_cannot_run_is_probed_at_small_sizes(evaluator: Evaluator) -> None:
    result = derivation(evaluator, DERIVE / "item_inputs.py")
    assert result.probe == "small" and result.original_estimated
    assert result.original_numel == 1024 * 96
    assert {p.name for p in result.parameters if p.sizes_inputs} == {"rows", "cols"}
    assert len(result.kept) >= 3 and [c.name for c in result.kept if c.visible] == ["original"]


def test_size_roots_follow_expressions_and_skip_derived_names(tmp_path: Path) -> None:
    source = (
        "import torch\nN = 2048 * 2\nM = N // 2\nshape = (N, 4)\nK = (3, 3)\naxis = -1\n_private = 5\n"
        "flag = True\neps = 1e-5\na, b = 1, 2\nC = 3\nC += 1\nclass Model: pass\n"
        "def get_inputs(): return []\ndef get_init_inputs(): return []\n"
    )
    path = tmp_path / "task.py"
    path.write_text(source)
    scope: dict[str, object] = {}
    exec(source, scope)
    sizes = {k: v for k, v in scope.items() if isinstance(v, int | tuple)}
    assert size_roots(load_task(path), sizes) == {"N": 4096, "K": (3, 3), "axis": -1, "a": 1, "b": 2}


def test_variant_sizes() -> None:
    assert [odd_size(v) for v in (1, 2, 3, 4, 64, 1000, 387)] == [1, 3, 3, 3, 63, 999, 385]
    primes = prime_sizes({"M": 4096, "N": 4096, "K": 2})
    assert primes["K"] == 2 and primes["M"] != primes["N"]
    assert all(v in (3271, 3259) for k, v in primes.items() if k != "K")
    tied = prime_sizes({"M": 4096, "N": 4096, "K": 5}, distinct=False)
    assert tied == {"M": 3271, "N": 3271, "K": 3}
    assert odd_size(2, grow=False) == 1


def test_input_distribution_reaches_reference_and_candidate(evaluator: Evaluator) -> None:
    task = load_task(SCALE_TASK)
    cases = build_cases(task, [{"N": 1000}, {"N": 1000, "name": "big", "inputs": {"scale": 20.0, "shift": 50.0}}])
    assert cases[1].key() != cases[0].key()
    options = EvalOptions(trials=1, timeout_s=30)
    good = evaluator.evaluate(task, SCALE_GOOD, options=options, cases=cases)
    assert good.status == "pass" and good.cases[1].inputs is not None
    entry = evaluator.cache.root / reference_key(task.sha256, cases[1].key(), 0, 1, "cpu")
    values = np.concatenate([v.ravel() for v in load_file(str(entry / "inputs_0.safetensors")).values()])
    assert 10 < float(values.std()) < 40 and 40 < float(values.mean()) < 60
    sniffer = evaluator.evaluate(task, DERIVE / "sniffer.py", options=options, cases=cases)
    assert [c.passed for c in sniffer.cases] == [True, False]


def test_set_applies_on_top_of_derived_cases(evaluator: Evaluator) -> None:
    cases = evaluator.cases(load_task(ROWS), set_overrides={"dim": 33})
    assert all(c.overrides["dim"] == 33 for c in cases)
    assert [c.name for c in cases] == ["dim=33", "batch=7,dim=33", "batch=1,dim=33", "dim=33,x*4", "dim=33,x-0.5"]
    assert [c.visible for c in cases] == [True, False, False, False, False]


def test_a_broken_reference_is_still_a_task_error(tmp_path: Path, evaluator: Evaluator) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(ROWS.read_text().replace("return torch.sum(x, dim=1)", "raise RuntimeError('broken reference')"))
    result = derivation(evaluator, broken)
    assert result.kept == [] and result.error is not None and "broken reference" in result.error
    with pytest.raises(ReferenceError_, match="broken reference"):
        evaluator.evaluate(broken, DERIVE / "rows_good.py", options=EvalOptions(trials=1))


def test_kope_cases_command(evaluator: Evaluator) -> None:
    runner = CliRunner()
    derived = runner.invoke(
        app, ["cases", str(DERIVE / "pool.py"), "--json", "--device", "cpu", "--max-elements", "5000"]
    )
    assert derived.exit_code == 0, derived.output
    payload = json.loads(derived.stdout)
    assert payload["source"] == "derived" and payload["derivation"]["max_elements"] == 5000
    assert payload["cases"][0]["name"] == "shrunk" and payload["cases"][0]["visible"]
    assert not any(c["visible"] for c in payload["cases"][1:])
    assert {"scale": 4.0, "shift": 0.0} in [c["inputs"] for c in payload["cases"]]
    reasons = {c["name"]: c["reason"] for c in payload["derivation"]["candidates"]}
    assert "over the budget of 5000" in reasons["original"]
    declared = runner.invoke(app, ["cases", str(get_op("softmax").task_path), "--json", "--device", "cpu"])
    assert declared.exit_code == 0 and json.loads(declared.stdout)["source"] == "get_cases"
    console = Console(record=True, width=200)
    console.print(derivation_report(derivation(evaluator, ROWS)))
    text = console.export_text()
    assert "6 cases kept" in text and "sizes input 0 dim 1" in text and "x*4" in text


# -- KernelBench levels 2 and 3: assignment forms, output-sizing names, the memory budget, too-large --

LEVELS = FIXTURES / "levels"


def test_size_roots_in_every_assignment_form(tmp_path: Path) -> None:
    from test_task import ASSIGNMENT_FORMS

    path = tmp_path / "forms.py"
    path.write_text(ASSIGNMENT_FORMS)
    scope: dict[str, object] = {}
    exec(ASSIGNMENT_FORMS, scope)
    sizes = {k: v for k, v in scope.items() if isinstance(v, int | tuple)}
    assert size_roots(load_task(path), sizes) == {
        "batch_size": 8,
        "depth": 4,
        "height": 16,
        "width": 16,
        "channels_in": 3,
        "channels_out": 6,
        "kernel_h": 3,
        "kernel_w": 3,
        "n": 4096,
        "a": 3,
        "b": 1,
    }, "hidden = 2 * n and shape = (batch_size, ...) follow their roots"


def test_level2_style_task_derives_cases_and_a_fused_autotuned_candidate_passes(evaluator: Evaluator) -> None:
    """`depth = 8; height = width = 128`, out_channels sizing only the output and the weight; the
    candidate keeps ConvTranspose3d in PyTorch and fuses softmax and sigmoid under @triton.autotune."""
    options = EvalOptions(trials=2, timeout_s=60, max_elements=4000)
    task = load_task(LEVELS / "convt3d_softmax_sigmoid.py")
    result = evaluator.derivation(task, options)
    assert result.error is None and result.too_large is None
    reasons = {p.name: p.reason for p in result.parameters}
    assert {p.name for p in result.parameters if p.sizes_inputs} >= {
        "batch_size",
        "in_channels",
        "out_channels",
        "depth",
        "height",
        "width",
    }
    assert reasons["out_channels"] == "sizes the outputs and the parameters, not the inputs"
    assert len(result.kept) >= 3 and distinct_shapes(result.kept) >= 3
    for case in result.kept:
        assert case.numel is not None and max(case.numel, case.output_numel or 0) <= 4000
    assert any(c.overrides.get("height") != c.overrides.get("width") for c in result.kept), "varied apart"
    evaluated = evaluator.evaluate(task, LEVELS / "convt3d_softmax_sigmoid_autotuned.py", options=options)
    assert evaluated.status == "pass", [(c.name, c.error) for c in evaluated.cases if not c.passed]
    assert evaluated.integrity.policy == "partial", "the convolution stays in PyTorch under the partial policy"
    assert len(evaluated.cases) == len(result.kept)
    assert {run.index for case in evaluated.cases for run in case.autotune} == {0, 1}


TOO_LARGE = """\
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8192, 8192)
    def forward(self, x):
        return self.fc(x)
def get_inputs():
    return [torch.rand(4096, 8192)]
def get_init_inputs():
    return []
"""


def test_a_task_no_case_of_which_fits_fails_before_running(tmp_path: Path, evaluator: Evaluator) -> None:
    path = tmp_path / "too_large.py"
    path.write_text(TOO_LARGE)
    result = evaluator.evaluate(path, SCALE_GOOD, options=EvalOptions(trials=1))
    assert result.status == "error" and result.exit_code == 2 and result.cases == []
    assert result.error is not None and result.error.kind == "too-large"
    assert "no module-level name sizes the inputs" in result.error.message
    assert result.error.hint == "it would fit with --max-elements 33554432"
    derivation = evaluator.derivation(load_task(path), EvalOptions(trials=1))
    assert derivation.too_large is not None and derivation.too_large.tried[0]["elements"] == 4096 * 8192


WIDE = """\
import torch
import torch.nn as nn
features = 16384
class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(features, features))
    def forward(self, x):
        return x @ self.weight
def get_inputs():
    return [torch.rand(1, features)]
def get_init_inputs():
    return [features]
"""


def test_a_case_whose_parameters_overflow_the_memory_is_shrunk(tmp_path: Path, evaluator: Evaluator) -> None:
    """16 thousand elements of inputs and outputs fit the budget; 268 million parameters, in float32
    and float64, do not fit half of a 2048 MB job."""
    path = tmp_path / "wide.py"
    path.write_text(WIDE)
    result = derivation(evaluator, path, max_elements=10**9, memory_mb=2048)
    assert result.original_bytes is not None and result.original_bytes > 1024 * 2**20
    original = next(c for c in result.candidates if c.kind == "original")
    assert not original.kept and "MB, over 1024 MB" in original.reason
    base = next(c for c in result.kept if c.visible)
    assert base.kind == "shrunk" and 4096 < base.overrides["features"] < 16384
    assert (base.numel or 0) + (base.output_numel or 0) + base.overrides["features"] ** 2 <= 2**30 / 12
    assert len(result.kept) >= 3


def test_a_recurrent_task_with_its_states_built_in_forward_is_sized_by_every_name(evaluator: Evaluator) -> None:
    """KernelBench level 3's LSTM and GRU files: the meta device ran the fused recurrent op step by
    step (about 35 s for 6 layers over 512 steps), the shapes job ran out of time and only the batch,
    or nothing, was found to size the case; the shapes job now gives the recurrent ops' shapes."""
    result = derivation(evaluator, LEVELS / "lstm_state_in_forward.py", max_elements=4000)
    assert result.error is None and result.too_large is None and result.notes == []
    reasons = {p.name: p.reason for p in result.parameters}
    assert reasons["sequence_length"] == "sizes input 0 dim 1" and reasons["input_size"] == "sizes input 0 dim 2"
    assert reasons["hidden_size"] == "sizes the outputs and the parameters, not the inputs"
    assert len(result.kept) == 6 and distinct_shapes(result.kept) >= 3
    assert all(c.overrides["sequence_length"] < 512 for c in result.kept)


def _in_process(path: Path) -> Callable[[Sequence[ShapeProbe]], list[ShapeProbeResult]]:
    """The shapes job's probes run here, without the sandbox (for tiny tasks only)."""
    from kope.evaluate.inside import shapes
    from kope.protocol import JobSpec

    spec = JobSpec(mode="shapes", device="cpu", task_path=str(path))

    def run(probes: Sequence[ShapeProbe]) -> list[ShapeProbeResult]:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as in a job; the tests' processes share the cores
        try:
            return [shapes._probe(probe, spec, False) for probe in probes]
        finally:
            torch.set_num_threads(threads)

    return run


@pytest.mark.slow
def test_a_unet_keeps_its_input_sizes_multiples_of_16_and_shrinks_its_features(tmp_path: Path) -> None:
    """KernelBench level 3's 45_UNetSoftmax: four poolings need height and width multiples of 16,
    and its parameters grow as features²; every proportional shrink broke a pooling or a skip
    connection's concatenation, so it was too-large. Probed in this process (no sandbox jobs)."""
    path = LEVELS / "unet_four_poolings.py"
    scope: dict[str, object] = {}
    exec(path.read_text(), scope)
    sizes = {k: v for k, v in scope.items() if isinstance(v, int) and not k.startswith("_")}
    result = derive(load_task(path), sizes, _in_process(path), max_elements=12000)
    assert result.error is None and result.too_large is None
    base = next(c for c in result.candidates if c.kept and c.visible)
    assert base.kind == "shrunk" and "shrunk-inputs-16" in base.reason
    assert base.overrides["features"] < 16, "features shrinks plainly: the parameters fit the budget"
    for case in result.kept:
        assert case.overrides["height"] % 16 == 0 and case.overrides["width"] % 16 == 0
    assert len(result.kept) >= 3
