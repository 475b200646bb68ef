"""Where jobs run: one small interface, local processes or a Ray cluster.

    executor = make_executor("local", workers=2)          # or "ray", address="auto"
    for row in executor.map(factory, jobs):               # rows as jobs finish, in any order
        ...
    executor.close()

A *factory* is a picklable callable that builds a worker (`run(job) -> row`, `close()`); every
process that runs jobs builds one and keeps it for every job it gets, so its evaluator (fork server,
reference cache) lives across jobs. Jobs are drawn from their iterable lazily, a window at a time,
so a caller can decide each job's budget from the rows already back. Leaving the loop early
(Ctrl-C, an error, `break`) cancels what has not run.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from enum import StrEnum
from typing import Any, Protocol

from kope.errors import KopeError


class ExecutorError(KopeError):
    """An executor cannot start (an unknown name, a missing extra, an unreachable cluster)."""


class JobWorker(Protocol):
    def run(self, job: Any) -> Any: ...

    def close(self) -> None: ...


WorkerFactory = Callable[[], JobWorker]


class Executor(Protocol):
    name: str

    def map(self, factory: WorkerFactory, jobs: Iterable[Any]) -> Iterator[Any]:
        """Run every job on a worker built by `factory`; each job's row as it finishes."""
        ...

    def close(self) -> None: ...


class ExecutorChoice(StrEnum):
    local = "local"
    ray = "ray"


class LocalExecutor:
    """Worker processes on this machine (spawned, each with its own worker); one: in this process.

    The pool outlives a `map` call (its workers stay warm for the next call with the same factory)
    until `close`.
    """

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, workers)
        self._pool: ProcessPoolExecutor | None = None
        self._factory: str | None = None

    def _pool_for(self, factory: WorkerFactory) -> ProcessPoolExecutor:
        key = repr(factory)
        if self._pool is None or self._factory != key:
            self.close()
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=context, initializer=_init_worker, initargs=(factory,)
            )
            self._factory = key
        return self._pool

    def map(self, factory: WorkerFactory, jobs: Iterable[Any]) -> Iterator[Any]:
        if self.workers <= 1:
            yield from _in_process(factory, jobs)
            return
        pool = self._pool_for(factory)
        pending: set[Future[Any]] = set()
        source = iter(jobs)
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < 2 * self.workers:
                    job = next(source, _END)
                    if job is _END:
                        exhausted = True
                        break
                    pending.add(pool.submit(_run_in_worker, job))
                if not pending:
                    break
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        except BaseException:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool, self._factory = None, None


_END = object()
_WORKER: JobWorker | None = None


def _in_process(factory: WorkerFactory, jobs: Iterable[Any]) -> Iterator[Any]:
    worker = factory()
    try:
        for job in jobs:
            yield worker.run(job)
    finally:
        worker.close()


def _init_worker(factory: WorkerFactory) -> None:
    global _WORKER
    from multiprocessing import util

    _WORKER = factory()
    util.Finalize(_WORKER, _WORKER.close, exitpriority=10)


def _run_in_worker(job: Any) -> Any:
    assert _WORKER is not None, "the worker was not initialised"
    return _WORKER.run(job)


def make_executor(
    name: str | ExecutorChoice = "local",
    *,
    workers: int = 1,
    address: str | None = None,
    device: str = "cpu",
) -> Executor:
    """`local` (`workers` processes) or `ray` (`address`: None starts a local cluster of `workers` CPUs,
    `auto` joins the running one, `ray://HOST:PORT` a remote one); `device` cuda asks Ray for a GPU per job."""
    chosen = name.value if isinstance(name, ExecutorChoice) else name
    if chosen == "local":
        return LocalExecutor(workers)
    if chosen == "ray":
        from kope.executors.raycluster import RayExecutor

        return RayExecutor(
            address=address,
            num_cpus=workers if address is None else None,
            resources={"GPU": 1.0} if device.startswith("cuda") else {"CPU": 1.0},
        )
    raise ExecutorError(f"unknown executor {chosen!r}: use local or ray")
