"""The local executor: jobs run on workers built once per process, rows come back as they finish, the iterable is
drawn lazily, an early exit cancels the rest, and a wrong name is a clear error. Real spawned processes."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from kope.executors import ExecutorError, LocalExecutor, make_executor


@dataclass(frozen=True)
class _Factory:
    """Builds a worker that squares a number and says which process (and which build of the worker) ran it."""

    offset: int = 0

    def __call__(self) -> _Worker:
        return _Worker(self.offset)


class _Worker:
    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.built = id(self)

    def run(self, job: int) -> tuple[int, int, int]:
        return job * job + self.offset, os.getpid(), self.built

    def close(self) -> None:
        pass


def test_two_processes_run_every_job_each_on_a_worker_kept_for_all_its_jobs() -> None:
    executor = LocalExecutor(2)
    try:
        rows = list(executor.map(_Factory(), range(12)))
    finally:
        executor.close()
    assert sorted(r[0] for r in rows) == [n * n for n in range(12)]
    pids = {r[1] for r in rows}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert len({(r[1], r[2]) for r in rows}) == len(pids)  # one worker per process, reused


def test_one_worker_runs_in_this_process_and_draws_jobs_lazily() -> None:
    drawn: list[int] = []

    def jobs() -> object:
        for n in range(100):
            drawn.append(n)
            yield n

    rows = LocalExecutor(1).map(_Factory(offset=1), jobs())  # type: ignore[arg-type]
    first = next(rows)
    assert first[0] == 1 and first[1] == os.getpid()
    assert drawn == [0]
    rows.close()  # type: ignore[attr-defined]


def test_an_unknown_executor_is_a_clear_error() -> None:
    assert isinstance(make_executor("local", workers=3), LocalExecutor)
    with pytest.raises(ExecutorError, match="unknown executor 'slurm'"):
        make_executor("slurm")
