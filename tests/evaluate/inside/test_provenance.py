"""Integrity by provenance: where each output's values came from decides, not the names in the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import FIXTURES

from kope.evaluate import Evaluator
from kope.evaluate.inside.monitor import Monitor
from kope.evaluate.inside.provenance import FILL, Label, Shadow, span, tensor_copies
from kope.evaluate.options import EvalOptions
from kope.integrity.dynamic import RunContext, observation_findings
from kope.protocol import HostEvent, Observations, OutputPart, Provenance, TorchCall
from kope.protocol.policy import decide

ROOT = FIXTURES.parents[1]
DEV = FIXTURES / "provenance_dev"
CHEATS = json.loads((DEV / "manifest.json").read_text())
HONEST = json.loads((DEV / "honest.json").read_text())


def test_shadow_later_writes_replace_earlier_ones() -> None:
    shadow = Shadow()
    source = Label(inputs=frozenset({0}))
    shadow.write(0, 100, source)
    shadow.write(40, 60, Label(kernel=True))
    pieces = shadow.read(0, 120)
    assert [(s, e) for s, e, _ in pieces] == [(0, 40), (40, 60), (60, 100), (100, 120)]
    assert pieces[1][2].kernel and pieces[3][2].unknown
    assert shadow.label(0, 40) == source
    shadow.write(0, 200, FILL)
    assert shadow.snapshot() == [(0, 200, FILL)]


def test_shadow_keeps_stores_whose_lanes_write_distinct_addresses() -> None:
    import numpy

    values = numpy.arange(4, dtype=numpy.float32)
    for order, kept in (([0, 4, 8, 12], True), ([12, 4, 0, 8], True), ([0, 4, 4, 8], False), ([8, 0, 8, 4], False)):
        shadow = Shadow()
        shadow.expect(numpy.array(order, dtype=numpy.uint64) + 4096, values)
        assert bool(shadow.stored) is kept, order


def test_span_covers_a_view_and_nothing_else() -> None:
    base = torch.zeros(4, 6)
    start, end = span(base)
    assert end - start == base.nbytes
    column = base[:, 2]
    low, high = span(column)
    assert start < low < high < end


def test_a_permutation_is_a_copy_and_a_reduction_is_not() -> None:
    x = torch.randn(3, 5)
    assert tensor_copies(x.t().contiguous(), [x]) is x
    assert tensor_copies(x.relu(), [x]) is None


def test_policy_follows_the_reference_unless_overridden() -> None:
    assert decide(None, None, ["relu"])[0] == "strict"
    assert decide(None, None, ["conv2d", "relu", "add"])[0] == "partial"
    assert decide(None, "strict", ["conv2d", "relu"]) == ("strict", "the task sets INTEGRITY_POLICY = 'strict'")
    assert decide("partial", "strict", ["relu"])[1] == "--policy partial"


def _observed(*parts: OutputPart, **provenance: object) -> Observations:
    return Observations(launches_per_forward=[1], provenance=Provenance(outputs=list(parts), **provenance))


def _rules(obs: Observations, policy: str = "strict", **context: object) -> set[str]:
    ctx = RunContext(policy=policy, reference_ops=("conv2d", "relu"), **context)  # type: ignore[arg-type]
    return {f.rule for f in observation_findings(obs, ctx) if f.severity == "reject"}


def test_strict_rejects_pytorch_on_inputs_and_partial_allows_it() -> None:
    obs = _observed(
        OutputPart(path="output", inputs=[0], kernel=True, torch_ops=["conv2d"]),
        torch_on_inputs=[TorchCall(name="conv2d", line=3)],
    )
    assert _rules(obs, "strict") == {"torch-compute"}
    assert _rules(obs, "partial") == set()


def test_outputs_from_pytorch_alone_or_a_copy_are_rejected_under_both_policies() -> None:
    alone = _observed(OutputPart(path="output", inputs=[0], torch_ops=["conv2d", "relu"]))
    copied = _observed(OutputPart(path="output", inputs=[0], copied=True, torch_ops=["conv2d"]))
    for policy in ("strict", "partial"):
        assert "torch-compute" in _rules(alone, policy)
        assert "copy-kernel" in _rules(copied, policy)


def test_a_large_epilogue_is_not_small() -> None:
    part = OutputPart(path="output", inputs=[0], kernel=True, torch_ops=["mul"])
    small = _observed(part, epilogue=[TorchCall(name="div")], torch_elements=1, kernel_elements=2000)
    large = _observed(part, epilogue=[TorchCall(name="mul")], torch_elements=5000, kernel_elements=2000)
    assert _rules(small) == set()
    assert _rules(large) == {"torch-compute"}


def test_kernels_must_read_the_inputs_the_reference_reads() -> None:
    obs = _observed(OutputPart(path="output", inputs=[0], kernel=True))
    assert _rules(obs, reference_inputs=frozenset({0, 1})) == {"copy-kernel"}
    assert _rules(obs, reference_inputs=frozenset({0})) == set()


def test_host_data_in_an_output_is_host_compute() -> None:
    obs = _observed(OutputPart(path="output", host=True, copied=True))
    assert obs.provenance is not None
    obs.provenance.host_built.append(HostEvent(what="torch.tensor", elements=64))
    assert _rules(obs) == {"host-compute"}


@pytest.mark.parametrize("entry", CHEATS, ids=[e["file"] for e in CHEATS])
def test_development_cheat_is_caught(evaluator: Evaluator, entry: dict[str, str]) -> None:
    result = evaluator.evaluate(ROOT / entry["task"], DEV / entry["file"], options=EvalOptions(trials=2))
    fired = [f for f in result.integrity.findings if f.rule == entry["rule"] and f.severity == entry["severity"]]
    assert fired, [f.model_dump() for f in result.integrity.findings]
    assert result.status == entry["status"]
    assert all(len(f.message) > 40 for f in fired)


@pytest.mark.parametrize("entry", HONEST, ids=[e["file"] for e in HONEST])
def test_development_honest_kernel_passes(evaluator: Evaluator, entry: dict[str, str]) -> None:
    result = evaluator.evaluate(ROOT / entry["task"], DEV / entry["file"], options=EvalOptions(trials=2))
    rejects = [f.model_dump() for f in result.integrity.findings if f.severity == "reject"]
    assert rejects == []
    assert result.status == "pass", result.error
    assert result.integrity.policy == entry["policy"]
    assert result.integrity.policy_reason


def test_policy_override_and_task_setting_tighten(evaluator: Evaluator, tmp_path: Path) -> None:
    task = DEV / "tasks" / "conv_relu_bias.py"
    candidate = DEV / "honest_conv_fused.py"
    forced = evaluator.evaluate(task, candidate, options=EvalOptions(trials=2, policy="strict"))
    assert forced.integrity.policy == "strict" and forced.integrity.policy_reason == "--policy strict"
    assert any(f.rule == "torch-compute" and f.severity == "reject" for f in forced.integrity.findings)
    strict_task = tmp_path / "conv_strict.py"
    strict_task.write_text(task.read_text() + '\nINTEGRITY_POLICY = "strict"\n')
    tightened = evaluator.evaluate(strict_task, candidate, options=EvalOptions(trials=2))
    assert tightened.integrity.policy == "strict"
    assert "INTEGRITY_POLICY" in (tightened.integrity.policy_reason or "")
    assert tightened.status == "reject"


def _argument_monitor(tmp_path: Path) -> Monitor:
    monitor = Monitor(str(tmp_path / "candidate.py"))
    monitor.interpreted = False  # the GPU path: arguments before and after each launch
    return monitor


def test_without_the_interpreter_a_launch_is_judged_by_its_arguments(tmp_path: Path) -> None:
    monitor = _argument_monitor(tmp_path)
    x = torch.randn(64)

    def computing(_kernel: object, src: torch.Tensor, dst: torch.Tensor) -> None:
        dst.copy_(src * 3 + 1)

    def copying(_kernel: object, src: torch.Tensor, dst: torch.Tensor) -> None:
        dst.copy_(src.flip(0))

    for launch, expected in ((computing, (True, False)), (copying, (False, True))):
        out = torch.empty(64)
        with monitor.forward([x]):
            monitor.traced_launch("k", launch, None, (x, out), {})
        label = monitor.shadow.tensor_label(out)
        assert (label.kernel, label.copied) == expected
        assert label.inputs == frozenset({0})
    assert monitor.provenance.torch_on_inputs == []  # the monitor's own copies and comparisons are not counted


@pytest.mark.slow
def test_an_extension_calling_back_into_pytorch_is_not_kernel_work(tmp_path: Path) -> None:
    monitor = _argument_monitor(tmp_path)
    a, b = torch.randn(8, 8), torch.randn(8, 8)

    def extension(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        return torch.mm(left, right)

    with monitor.forward([a, b]):
        out = monitor.traced_extension("matmul", extension, (a, b), {})
    label = monitor.shadow.tensor_label(out)
    assert not label.kernel and "mm" in label.torch_ops
    assert [c.name for c in monitor.provenance.extension_torch] == ["mm"]


@pytest.mark.slow
def test_kope_check_says_which_policy_applied() -> None:
    from typer.testing import CliRunner

    from kope.cli import app

    task = DEV / "tasks" / "conv_relu_bias.py"
    result = CliRunner().invoke(
        app, ["check", str(task), str(DEV / "honest_conv_fused.py"), "--json", "--device", "cpu", "--policy", "partial"]
    )
    report = json.loads(result.stdout)
    assert (report["verdict"], report["policy"], report["policy_reason"]) == ("clean", "partial", "--policy partial")
