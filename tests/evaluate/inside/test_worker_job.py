"""The worker's side of the protocol (kope.evaluate.inside.worker), run in this process on trusted
task code: what it writes is JSON that validates as a `WorkerResult` and safetensors tensors.

Named `test_worker_job.py` because `tests/triage/test_worker.py` holds that basename.
Candidate jobs install the integrity monitor, which patches the interpreter: they run only in real
sandboxed workers (`tests/evaluate/test_runner.py`, the evaluator's tests).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch
from conftest import SCALE_TASK

from kope import protocol
from kope.evaluate.inside import tensors, worker
from kope.protocol import JobSpec, WorkerResult


@pytest.fixture
def job_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The worker prunes sys.path and sets TRITON_INTERPRET for the process it owns; keep ours."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("TRITON_INTERPRET", os.environ.get("TRITON_INTERPRET", "0"))
    return tmp_path


def _run(job_dir: Path, spec: JobSpec) -> WorkerResult:
    (job_dir / protocol.SPEC_FILE).write_text(spec.model_dump_json())
    assert worker.run_job(job_dir) == 0
    return WorkerResult.model_validate_json((job_dir / protocol.RESULT_FILE).read_text())


def test_a_plan_job_reports_the_cases_and_sizes_of_the_task(job_dir: Path) -> None:
    result = _run(job_dir, JobSpec(mode="plan", task_source=SCALE_TASK.read_text()))
    assert result.error is None and result.plan is not None
    assert result.plan.cases == [{"N": 1000}, {"N": 1}, {"N": 257}]
    assert result.plan.sizes == {"N": 1000}


def test_a_reference_job_writes_its_inputs_and_float64_outputs_as_safetensors(job_dir: Path) -> None:
    result = _run(job_dir, JobSpec(mode="reference", task_source=SCALE_TASK.read_text(), trial_seeds=[3, 4]))
    assert result.error is None and [t.index for t in result.trials] == [0, 1]
    assert result.precision == "float64" and result.reference_ops == ["mul"]
    for index, seed in enumerate([3, 4]):
        (x,) = tensors.load(job_dir / protocol.inputs_file(index))
        torch.manual_seed(seed)
        assert torch.equal(x, torch.randn(1000)), "the inputs come from get_inputs() under the trial's seed"
        out = tensors.load(job_dir / protocol.outputs_file(index))
        assert out.dtype == torch.float64 and torch.equal(out, x.double() * 2.0)
    assert not list(job_dir.glob("*.pkl")) and not list(job_dir.glob("*.pt"))


def test_a_task_that_fails_is_a_task_error_in_the_result_not_a_crash(job_dir: Path) -> None:
    source = SCALE_TASK.read_text().replace("return x * 2.0", "raise ValueError('broken reference')")
    result = _run(job_dir, JobSpec(mode="reference", task_source=source, trial_seeds=[0]))
    assert result.error is not None and result.error.kind == "task"
    assert "trial 0" in result.error.message and "broken reference" in result.error.message
