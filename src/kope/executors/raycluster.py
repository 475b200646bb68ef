"""The Ray executor: one Ray task per job, each Ray worker process keeping one kope worker alive.

A task whose worker process dies (killed, out of memory) is retried by Ray (`max_retries`); the
caller gets each job's row once, from the try that finished. Leaving the loop cancels every task
not yet finished (force: their processes are killed, so a Ctrl-C does not wait for long repairs).
Ray is an optional extra: `pip install 'kope[ray]'`.
"""

from __future__ import annotations

import atexit
import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from kope.executors import ExecutorError, JobWorker, WorkerFactory

_WORKERS: dict[str, JobWorker] = {}


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError("the Ray executor needs Ray: pip install 'kope[ray]'") from None
    return ray


def _run_job(factory: WorkerFactory, job: Any) -> Any:
    """Runs in a Ray worker process: the worker for this factory is built once per process."""
    key = hashlib.sha256(repr(factory).encode()).hexdigest()  # factories are dataclasses or partials: a stable repr
    worker = _WORKERS.get(key)
    if worker is None:
        worker = _WORKERS[key] = factory()
        atexit.register(worker.close)
    return worker.run(job)


class RayExecutor:
    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        num_cpus: int | None = None,
        resources: dict[str, float] | None = None,
        max_retries: int = 3,
        window: int | None = None,
        object_store_mb: int = 256,
    ) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.resources = dict(resources or {"CPU": 1.0})
        self.max_retries = max_retries
        self.window = window
        self.object_store_mb = object_store_mb
        self._started = False
        self._ray = _ray()

    def _init(self) -> None:
        ray = self._ray
        if ray.is_initialized():
            return
        try:
            if self.address is None:
                ray.init(
                    address="local",  # a new local cluster, never one a RAY_ADDRESS or /tmp/ray points at
                    num_cpus=self.num_cpus or 1,
                    include_dashboard=False,
                    log_to_driver=False,
                    object_store_memory=self.object_store_mb * 1024 * 1024,
                    configure_logging=False,
                )
            else:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
            raise ExecutorError(f"cannot start or reach the Ray cluster ({self.address or 'local'}): {exc}") from exc
        self._started = True

    def map(self, factory: WorkerFactory, jobs: Iterable[Any]) -> Iterator[Any]:
        self._init()
        ray = self._ray
        options: dict[str, Any] = {
            "max_retries": self.max_retries,
            "retry_exceptions": False,
            "num_cpus": self.resources.get("CPU", 0.0),
        }
        if self.resources.get("GPU"):
            options["num_gpus"] = self.resources["GPU"]
        task = ray.remote(_run_job).options(**options)
        window = self.window or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        factory_ref = ray.put(factory)
        pending: list[Any] = []
        source = iter(jobs)
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < window:
                    job = next(source, _END)
                    if job is _END:
                        exhausted = True
                        break
                    pending.append(task.remote(factory_ref, job))
                if not pending:
                    break
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    yield ray.get(ref)
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False


_END = object()
