"""The job's memory cgroup (kope.evaluate.cgroup): the kernel's own limit on every page a job holds, where this
machine allows one (root, or a delegated cgroup); elsewhere these tests skip and the poll alone limits memory."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.cgroup import JobGroup, hierarchy

ROOT = Path(__file__).resolve().parents[2]
available = pytest.mark.skipif(hierarchy() is None, reason="no memory cgroup this user may make (see kope doctor)")


def _child(group: JobGroup, megabytes: int) -> tuple[int, bool]:
    """Fork a child that joins `group` and holds `megabytes` in a memfd (pages no RSS shows); its wait status and
    whether the kernel killed it at the group's limit."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            group.join()
            fd = os.memfd_create("kope-test")
            block = b"\x01" * (1 << 20)
            for _ in range(megabytes):
                os.write(fd, block)
            os._exit(0)
        except BaseException:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    return status, group.oom_killed()


@available
def test_the_kernel_stops_memory_past_the_group_limit_and_lets_the_rest_run() -> None:
    group = JobGroup.create(64)
    assert group is not None
    try:
        status, killed = _child(group, 16)
        assert os.WIFEXITED(status) and os.waitstatus_to_exitcode(status) == 0 and not killed
        assert group.peak_mb() > 0
    finally:
        group.close()
    group = JobGroup.create(64)
    assert group is not None
    try:
        status, killed = _child(group, 400)
        stopped = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        refused = os.WIFEXITED(status) and os.waitstatus_to_exitcode(status) == 3  # ENOMEM on write, where not killed
        assert stopped or refused, status
        assert not stopped or killed
    finally:
        group.close()
    assert not group.path.exists()


@available
def test_every_evaluation_job_runs_in_its_group_and_says_so(evaluator: Evaluator) -> None:
    task = ROOT / "tests" / "fixtures" / "tasks" / "scale.py"
    candidate = ROOT / "tests" / "fixtures" / "hostile" / "sealed" / "boundary.py"
    result = evaluator.evaluate(task, candidate, options=EvalOptions(trials=1, integrity=False), which="visible")
    assert result.status == "pass", result.error
    assert result.sandbox is not None and "cgroup-memory" in result.sandbox.protections
    off = evaluator.evaluate(
        task, candidate, options=EvalOptions(trials=1, integrity=False, sandbox="off"), which="visible"
    )
    assert off.sandbox is not None and "cgroup-memory" not in off.sandbox.protections


@available
@pytest.mark.parametrize("mode", ["auto", "landlock", "process"])
def test_a_candidate_that_tries_to_leave_its_group(evaluator: Evaluator, mode: str) -> None:
    """It looks for its group and tries to move itself into the parent group. Under namespaces it cannot see it,
    under Landlock the move is refused; at the `process` level (root here) it can leave, so that level does not
    claim the protection. The control (KOPE_ATTACK=none) only looks."""
    candidate = ROOT / "tests" / "fixtures" / "hostile" / "boundary" / "cgroup_escape.py"
    task = ROOT / "tests" / "fixtures" / "tasks" / "scale.py"
    for trick in ("none", "escape"):
        options = EvalOptions(trials=1, integrity=False, sandbox=mode, extra_env={"KOPE_ATTACK": trick})  # type: ignore[arg-type]
        result = evaluator.evaluate(task, candidate, options=options, which="visible")
        assert result.status == "pass", result.error
        shown = result.cases[0].stdout
        assert result.sandbox is not None
        claimed = "cgroup-memory" in result.sandbox.protections
        if result.sandbox.level == "namespaces":
            assert "in group: False" in shown and claimed
        elif result.sandbox.level == "landlock":
            assert "in group: True" in shown and claimed
            assert trick == "none" or ("leave group: written" not in shown and "still in group: True" in shown)
        else:
            assert not claimed
