"""The fork server (kope.evaluate.runner): it forks a supervisor per job, the supervisor's worker runs
the job, and the outcome comes back. Uses the session's evaluator's fork server (conftest)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import SCALE_TASK

from kope import protocol
from kope.evaluate import Evaluator
from kope.evaluate.confine import Settings
from kope.evaluate.sandbox import SandboxLimits
from kope.protocol import JobSpec, WorkerResult


def _job(root: Path, name: str, spec: JobSpec) -> Path:
    job_dir = root / name
    job_dir.mkdir()
    (job_dir / protocol.SPEC_FILE).write_text(spec.model_dump_json())
    return job_dir


def test_the_fork_server_runs_jobs_side_by_side_and_reports_each(evaluator: Evaluator, tmp_path: Path) -> None:
    spec = JobSpec(mode="plan", task_source=SCALE_TASK.read_text())
    jobs = [_job(tmp_path, f"job-{i}", spec) for i in range(2)]
    limits = SandboxLimits(timeout_s=60, memory_mb=2048)
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda d: evaluator.runner.run(d, limits), jobs))
    for job_dir, outcome in zip(jobs, outcomes, strict=True):
        assert outcome.exit_code == 0 and not outcome.timed_out and outcome.sandbox is not None
        result = WorkerResult.model_validate_json((job_dir / protocol.RESULT_FILE).read_text())
        assert result.mode == "plan" and result.plan is not None and result.plan.sizes == {"N": 1000}


def test_a_job_past_its_time_is_killed_and_says_so(evaluator: Evaluator, tmp_path: Path) -> None:
    spec = JobSpec(mode="plan", task_source="import time\nwhile True:\n    time.sleep(0.05)\n")
    job_dir = _job(tmp_path, "job", spec)
    outcome = evaluator.runner.run(job_dir, SandboxLimits(timeout_s=1.5, sandbox=Settings(mode="auto")))
    assert outcome.timed_out
    assert not (job_dir / protocol.RESULT_FILE).exists()
    assert outcome.leftover_processes == 0
