"""The store under concurrent writers, one killed mid-transaction: on SQLite and on a real PostgreSQL.

The PostgreSQL server is started here (`initdb` into a temporary directory, a loopback port); where
its binaries or psycopg are missing the PostgreSQL cases are skipped with the reason (see the README).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kope.memory.pglocal import LocalPostgres, PostgresUnavailable
from kope.memory.store import ExperienceStore, StoreError

WRITER = Path(__file__).with_name("store_writer.py")
RUNS = 3


@pytest.fixture(scope="module")
def postgres() -> Iterator[LocalPostgres]:
    try:
        server = LocalPostgres.start()
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL is not available here: {exc}")
    with server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    server: LocalPostgres = request.getfixturevalue("postgres")
    return server.create_database(f"t{os.getpid()}_{time.monotonic_ns()}")


def _writer(url: str, writer: int, *extra: str, quiet: bool = False) -> subprocess.Popen[str]:
    pipe = subprocess.DEVNULL if quiet else subprocess.PIPE
    return subprocess.Popen(
        [sys.executable, str(WRITER), url, str(writer), str(RUNS), *extra], stdout=pipe, stderr=pipe, text=True
    )


@pytest.mark.slow
def test_four_writers_one_killed_mid_transaction(store_url: str, tmp_path: Path) -> None:
    ExperienceStore.open(store_url).close()  # migrated once, so the writers race on rows, not on tables
    marker = tmp_path / "inside"
    victim = _writer(store_url, 0, "1", str(marker), quiet=True)
    others = [_writer(store_url, n) for n in (1, 2, 3)]
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert victim.poll() is None, "the victim ended before its transaction"
        assert time.monotonic() < deadline, "the victim never reached its transaction"
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    for process in others:
        _out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err[-2000:]
    with ExperienceStore.open(store_url) as store:
        assert store.check() == []
        runs = store.runs()
        by_writer: dict[int, list[int]] = {}
        for run in runs:
            assert run.summary is not None and run.finished is not None
            by_writer.setdefault(run.summary["writer"], []).append(run.summary["index"])
            assert len(store.decisions(run_id=run.id)) == 2 and len(store.evaluations(run_id=run.id)) == 3
        # the victim committed its first run; the one it was killed inside left nothing
        assert sorted(by_writer[0]) == [0]
        assert all(sorted(by_writer[n]) == list(range(RUNS)) for n in (1, 2, 3))
        assert store.committed("writer-0-run-0") and not store.committed("writer-0-run-1")
        before = store.stats()
    # a writer retried from the start (here, in this process) commits nothing twice
    spec = importlib.util.spec_from_file_location("store_writer", WRITER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(store_url, 1, RUNS)
    with ExperienceStore.open(store_url) as store:
        after = store.stats()
        assert (after.runs, after.versions, after.decisions, after.evaluations) == (
            before.runs,
            before.versions,
            before.decisions,
            before.evaluations,
        )
        assert store.check() == []


def test_check_reports_a_partial_run(store_url: str) -> None:
    from kope.cases.task import load_task
    from kope.ops import get_op

    with ExperienceStore.open(store_url) as store:
        task = store.ensure_task(load_task(get_op("relu").task_path))
        run = store.start_run("debug", task.id, model="offline", device="cpu")
        assert store.check() == [f"run {run.id}: not finished (a partial run)"]
        assert store.check(open_runs=True) == []
        with pytest.raises(StoreError), store.atomic():
            store.start_run("debug", task.id, model="offline", device="cpu")
            raise StoreError("the writer fails mid-run")
        assert [r.id for r in store.runs()] == [run.id]


def test_sqlite_atomic_blocks_take_turns_past_the_busy_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A triage worker's atomic block holds SQLite's write lock for a whole repair (minutes); a second worker's
    block waits for its turn however long that is, where it had failed after the busy timeout ("database is
    locked": every overlapping repair of a `--workers 2` triage on a SQLite store lost)."""
    import threading

    from kope.memory import engine

    monkeypatch.setattr(engine, "BUSY_TIMEOUT_S", 0.2)
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    ExperienceStore.open(url).close()
    first, second = ExperienceStore.open(url), ExperienceStore.open(url)
    inside, done = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def hold() -> None:
        with first.atomic(key="first"):
            inside.set()
            time.sleep(1.5)  # seven busy timeouts

    def wait_turn() -> None:
        inside.wait(timeout=30)
        try:
            with second.atomic(key="second"):
                pass
        except BaseException as exc:
            failures.append(exc)
        done.set()

    threads = [threading.Thread(target=hold), threading.Thread(target=wait_turn)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert done.is_set() and failures == []
        assert first.committed("first") and second.committed("second")
    finally:
        first.close()
        second.close()
