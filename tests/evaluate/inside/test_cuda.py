"""CUDA emulated on the CPU interpreter (kope.evaluate.inside.cuda): kernels written for a GPU are judged by
their kernels, what cannot run here says so, and a fallback off the GPU is the path not taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, SCALE_GOOD, SCALE_TASK

from kope.evaluate import EvalOptions, Evaluator
from kope.render import emulation_line

CUDA = FIXTURES / "cuda"
OPTIONS = EvalOptions(trials=2, timeout_s=60, memory_mb=2048)
OFF = EvalOptions(trials=2, timeout_s=60, memory_mb=2048, cuda_emulation=False)


@pytest.mark.parametrize("fixture", ["written_for_cuda.py", "driver_queries.py", "inductor_style.py"])
def test_a_kernel_written_for_cuda_runs_and_the_verdict_says_it_was_emulated(
    evaluator: Evaluator, fixture: str
) -> None:
    result = evaluator.evaluate(SCALE_TASK, CUDA / fixture, options=OPTIONS)
    assert result.status == "pass", (result.error, result.integrity.findings)
    assert result.emulation is not None and result.emulation.note == "CUDA emulated on the CPU interpreter"
    assert result.emulation.used, "what the candidate asked of CUDA is listed"
    assert '"emulation"' in result.model_dump_json()
    assert "CUDA emulated on the CPU interpreter" in emulation_line(result)


def test_without_emulation_the_same_kernel_fails_on_its_device_assert(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, CUDA / "written_for_cuda.py", options=OFF)
    assert result.status == "error" and result.emulation is None


def test_honest_cpu_kernels_are_unchanged_and_judged_as_before(evaluator: Evaluator) -> None:
    on = evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=OPTIONS)
    off = evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=OFF)
    assert on.status == off.status == "pass"
    assert on.emulation is not None and on.emulation.used == [] and off.emulation is None
    assert [c.max_abs_err for c in on.cases] == [c.max_abs_err for c in off.cases]


def test_a_fallback_off_the_gpu_is_the_path_not_taken_and_is_reported(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, CUDA / "fallback_honest.py", options=OPTIONS)
    assert result.status == "pass", result.integrity.findings
    (finding,) = [f for f in result.integrity.findings if f.rule == "device-fallback"]
    assert finding.severity == "warn" and "is_cuda" in finding.message


def test_a_wrong_kernel_behind_a_fallback_is_judged_by_the_kernel(evaluator: Evaluator) -> None:
    """The PyTorch branch would be right; on a GPU the kernel (x * 3) runs, and so it does here."""
    result = evaluator.evaluate(SCALE_TASK, CUDA / "fallback_wrong_kernel.py", options=OPTIONS)
    assert result.status == "fail"
    assert all(not case.passed for case in result.cases)


def test_pytorch_on_the_cuda_path_is_still_a_cheat(evaluator: Evaluator) -> None:
    """The emulation opens no door: what runs on the CUDA path is what the gates judge."""
    result = evaluator.evaluate(SCALE_TASK, CUDA / "torch_on_cuda_path.py", options=OPTIONS)
    assert result.status == "reject"
    assert {"torch-compute", "kernel-not-launched"} & {f.rule for f in result.integrity.findings}


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        ("cuda_extension.py", "CUDA C++ extension"),
        ("compiled.py", "torch.compile"),
        ("inline_ptx.py", "inline PTX"),
    ],
)
def test_what_cannot_run_here_is_unsupported_with_the_reason(evaluator: Evaluator, fixture: str, reason: str) -> None:
    result = evaluator.evaluate(SCALE_TASK, CUDA / fixture, options=OPTIONS)
    assert result.status == "error"
    assert result.error is not None and result.error.kind == "unsupported"
    assert reason in result.error.message and result.error.hint and "--device cuda" in result.error.hint
    assert not result.integrity.findings or result.integrity.verdict == "clean"


def test_inductor_style_code_gets_what_a_cuda_build_of_older_pytorch_gave_it(evaluator: Evaluator) -> None:
    """The raw stream, allocations on the device and `triton_heuristics.grid` (gone since PyTorch 2.6), each listed as
    used; without emulation the import fails as it would on this PyTorch."""
    result = evaluator.evaluate(SCALE_TASK, CUDA / "inductor_style.py", options=OPTIONS)
    assert result.status == "pass" and result.emulation is not None, result.error
    assert {
        "torch._C._cuda_getCurrentRawStream",
        "torch._C._dynamo.guards._empty_strided_cuda",
        "torch._inductor.runtime.triton_heuristics.grid (PyTorch < 2.6)",
    } <= set(result.emulation.used)
    off = evaluator.evaluate(SCALE_TASK, CUDA / "inductor_style.py", options=OFF)
    assert off.status == "error" and off.error is not None and off.error.kind == "import"


GPU_TASK = """
import torch
import torch.nn as nn

N = 5000


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0 + torch.zeros(x.shape, device="cuda")


def get_inputs():
    return [torch.randn(N, device="cuda").cuda().to("cuda", non_blocking=True)]


def get_init_inputs():
    return []
"""


def test_a_task_written_for_a_gpu_runs_its_reference_where_the_job_computes(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A task file asking for CUDA itself (`device="cuda"` in get_inputs and in forward, `.cuda()`, `.to("cuda")`):
    its reference runs on the CPU with emulation, its cases are derived (meta probes included); without emulation it
    fails as before."""
    task = tmp_path / "gpu_task.py"
    task.write_text(GPU_TASK)
    result = evaluator.evaluate(task, CUDA / "written_for_cuda.py", options=OPTIONS)
    assert result.status == "pass", result.error
    assert len(result.cases) > 1, "cases derived from the task's sizes"
    off = evaluator.evaluate(task, CUDA / "written_for_cuda.py", options=OFF)
    assert off.status == "error" and off.error is not None and "CUDA" in off.error.message


def test_a_kernel_guarding_the_tasks_own_sizes_is_unsupported_on_other_sizes(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Inductor-style code whose `assert_size_stride` holds the task's own size (N = 1000): right there, stopped by
    its guard on the case N = 1, which says nothing of its values: `unsupported`, with the hint to judge it at the
    task's own sizes; the same guard on the own-size case, failing, stays the candidate's runtime error."""
    guarded = tmp_path / "guarded.py"
    guarded.write_text(
        (CUDA / "inductor_style.py")
        .read_text()
        .replace("assert_size_stride(x, (n,), (1,))", "assert_size_stride(x, (1000,), (1,))")
    )
    result = evaluator.evaluate(SCALE_TASK, guarded, options=OPTIONS)
    assert result.status == "error" and result.error is not None, result.status
    assert result.error.kind == "unsupported" and "own sizes" in (result.error.hint or ""), result.error
    assert result.cases[0].passed, "right at the task's own size"
    wrong = tmp_path / "wrong_guard.py"
    wrong.write_text(guarded.read_text().replace("(1000,), (1,))", "(999,), (1,))"))
    failed = evaluator.evaluate(SCALE_TASK, wrong, options=OPTIONS)
    assert failed.error is not None and failed.error.kind == "runtime", failed.error
