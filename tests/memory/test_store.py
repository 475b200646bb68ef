"""The experience store: round trips, dedupe, signatures, migrations, concurrent writers, interruptions."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from kope.cases.task import load_task
from kope.memory import DecisionIn, ExperienceStore, Injected, StoreError, schema
from kope.memory.fingerprints import normalize_error, normalized_hash
from kope.ops import get_op
from kope.protocol.results import CaseResult, EvalError, EvalResult, Timing

RELU = get_op("relu")
SOURCE = RELU.kernel_path.read_text()


def result(status: str = "pass", ms: float | None = 10.0, error: EvalError | None = None) -> EvalResult:
    timing = Timing(method="interpreter-wall", candidate_ms=ms, reference_ms=0.1) if ms is not None else None
    case = CaseResult(name="n=1", overrides={}, visible=True, passed=status == "pass", timing=timing, error=error)
    return EvalResult(
        status=status,
        error=error,
        cases=[case, case],
        cases_run="all",  # type: ignore[arg-type]
        task="t.py",
        candidate="c.py",
        device="cpu",
        seed=0,
    )


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with ExperienceStore.open(tmp_path / "memory.db") as opened:
        yield opened


def test_round_trip_lineage_and_dedupe(store: ExperienceStore) -> None:
    task = store.ensure_task(load_task(RELU.task_path))
    assert task.family == "elementwise" and task.signature == "batch_size=64,dim=1000|float32"
    assert store.ensure_task(load_task(RELU.task_path)).id == task.id
    run = store.start_run("optimize", task.id, model="offline", device="cpu-interpreter")
    start = store.record_step(run.id, task.id, SOURCE, result=result(ms=20.0))
    assert start.new and start.evaluation is not None and start.evaluation.time_ms == 40.0
    child = store.record_step(
        run.id,
        task.id,
        SOURCE.replace("1024", "2048"),
        parent_id=start.version.id,
        made=DecisionIn(kind="launch-config", text="bigger blocks", params={"x": 1}),
        result=result(ms=10.0),
        evidence={"decision:7": start.version.id, "pattern:missing-mask": None},
    )
    sibling = store.record_step(
        run.id,
        task.id,
        SOURCE.replace("1024", "512"),
        parent_id=start.version.id,
        made=DecisionIn(kind="launch-config", text="smaller"),
        result=result("fail"),
    )
    grandchild = store.record_step(
        run.id,
        task.id,
        SOURCE.replace("1024", "4096"),
        parent_id=child.version.id,
        made=DecisionIn(kind="launch-config", text="even bigger"),
        result=result(ms=8.0),
    )
    again = store.record_step(run.id, task.id, SOURCE, result=result(ms=21.0))
    assert not again.new and again.version.id == start.version.id, "the same source is stored once"
    assert store.lineage(grandchild.version.id) == [child.version.id, start.version.id]
    kinds = {(e.kind, e.src, e.dst) for e in store.edges(run_id=run.id)}
    assert ("alternative_of", sibling.version.id, child.version.id) in kinds
    assert ("used_evidence", child.version.id, start.version.id) in kinds
    assert [d.text for d in store.decisions(run_id=run.id)] == ["bigger blocks", "smaller", "even bigger"]
    rows = {r.text: r for r in store.experience(run_id=run.id)}
    assert rows["bigger blocks"].speedup == pytest.approx(2.0) and rows["smaller"].correct is False
    store.finish_run(
        run.id,
        status="improved",
        stop_reason="done",
        best_version=grandchild.version.id,
        summary={"config": {"const:BLOCK": 4096}, "speedup_vs_start": 2.5},
    )
    assert store.best_configs("cpu-interpreter")[0]["config"] == {"const:BLOCK": 4096}
    assert store.best_configs("cuda:H100") == []
    stats = store.stats()
    assert (stats.versions, stats.decisions, stats.evaluations, stats.runs) == (4, 3, 5, 1)
    assert stats.edges["derived_from"] == 3 and stats.schema_version == schema.LATEST


def test_error_signatures_count_instead_of_duplicating(store: ExperienceStore) -> None:
    first = "ValueError: shape (64, 1000) at /tmp/kope-abc/job-1/candidate.py line 12: got 3.5"
    second = "ValueError: shape (7, 4097) at /home/u/x/candidate.py line 40: got 17"
    assert normalize_error(first, "runtime") == normalize_error(second, "runtime")
    assert "ValueError" in normalize_error(first) and "<path>" in normalize_error(first)
    assert normalize_error(first) != normalize_error("TypeError: shape (1, 2)")
    task = store.ensure_task(load_task(RELU.task_path))
    run = store.start_run("debug", task.id, model="m", device="cpu-interpreter")
    for index, message in enumerate((first, second)):
        store.record_step(
            run.id,
            task.id,
            SOURCE + f"\n# {index}\n",
            result=result("error", None, EvalError(kind="runtime", message=message)),
        )
    assert store.signature_counts() == [(normalize_error(first, "runtime"), 2)]
    assert normalized_hash(SOURCE + "\n# 0\n") == normalized_hash(SOURCE + "\n# 1\n")


def test_pattern_evidence_learned_and_injections(store: ExperienceStore) -> None:
    task = store.ensure_task(load_task(RELU.task_path))
    run = store.start_run("debug", task.id, model="m", device="cpu-interpreter")
    step = store.record_step(run.id, task.id, SOURCE)
    store.add_pattern_evidence("missing-mask", "applied", device="cpu", version_id=step.version.id, run_id=run.id)
    store.add_pattern_evidence("missing-mask", "applied", device="cpu")
    assert store.mark_fixed(run.id, step.version.id) == 1
    stats = store.pattern_stats()["missing-mask"]
    assert (stats.applied, stats.fixed, stats.rate) == (2, 1, 0.5)
    values = {
        "pattern_id": "learned-1",
        "task_id": task.id,
        "family": "elementwise",
        "title": "t",
        "explanation": "e",
        "diff": "d",
        "keywords": [],
        "features": {"tail": True},
        "cues": [],
    }
    assert store.add_learned(values)[1] and not store.add_learned(values)[1]
    assert [p.pattern_id for p in store.learned()] == ["learned-1"]
    store.log_injections(
        "p1",
        [Injected(item="decision:1", section="other-tasks", level=1, tokens=12, rank=1, score=0.5)],
        run_id=run.id,
        version_id=step.version.id,
    )
    store.injection_outcome("p1", "pass", step.version.id)
    (logged,) = store.injections("p1")
    assert logged.outcome == "pass" and logged.produced_version == step.version.id and logged.tokens == 12


def test_migrates_a_version_1_store(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = ExperienceStore.open(path, migrate=False)
    assert old.migrate(target=1) == [1] and old.schema_version() == 1
    old.close()
    with sqlite3.connect(path) as raw:
        raw.execute(
            "INSERT INTO task (hash, name, family, signature, path, created) VALUES ('h', 'relu', "
            "'elementwise', '-', 'p', 1)"
        )
        raw.execute(
            "INSERT INTO run (kind, task_id, model, device, toolchain, started, tokens_prompt, tokens_completion) "
            "VALUES ('debug', 1, 'm', 'cpu-interpreter', 't', 1, 0, 0)"
        )
        raw.execute("INSERT INTO version (task_id, hash, norm_hash, source, created) VALUES (1, 'a', 'a', 'x = 1', 1)")
        raw.execute(
            "INSERT INTO evaluation (version_id, run_id, scope, status, correct, cases_passed, cases_total, "
            "integrity, device, toolchain, created) VALUES (1, 1, 'all', 'pass', 1, 2, 2, 'clean', 'cpu', 't', 1)"
        )
        assert "pattern_evidence" not in {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    with ExperienceStore.open(path) as migrated:
        assert migrated.schema_version() == schema.LATEST
        assert [e.status for e in migrated.evaluations()] == ["pass"] and migrated.evaluations()[
            0
        ].error_signature is None
        migrated.add_pattern_evidence("missing-mask", "fixed", device="cpu")
        assert migrated.add_evaluation(
            1, result("error", None, EvalError(kind="runtime", message="boom")), run_id=1, scope="all", device="cpu"
        ).error_signature
        assert migrated.migrate() == []
    fresh = tmp_path / "fresh.db"
    ExperienceStore.open(fresh).close()
    for database in (path, fresh):
        inspector = inspect(create_engine(f"sqlite:///{database}"))
        for table in schema.metadata.tables.values():
            assert {c.name for c in table.columns} == {c["name"] for c in inspector.get_columns(table.name)}


def test_refuses_a_newer_schema_and_bad_urls(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    ExperienceStore.open(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="newer"):
        ExperienceStore.open(path)
    with pytest.raises(StoreError):
        ExperienceStore.open("nosuchdialect://x")


WRITER = textwrap.dedent("""
    import sys
    from kope.memory import DecisionIn, ExperienceStore
    from kope.cases.task import load_task
    path, task_path, worker = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = ExperienceStore.open(path)
    task = store.ensure_task(load_task(task_path))
    run = store.start_run("optimize", task.id, model=f"w{worker}", device="cpu-interpreter")
    shared = store.record_step(run.id, task.id, "shared = 1\\n")
    for step in range(15):
        store.record_step(run.id, task.id, f"x = {worker * 1000 + step}\\n", parent_id=shared.version.id,
                          made=DecisionIn(kind="edit", text=f"{worker}:{step}"))
    store.finish_run(run.id, status="done", stop_reason="done")
""")


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    ExperienceStore.open(path).close()
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(RELU.task_path), str(i)], stderr=subprocess.PIPE, text=True
        )
        for i in range(4)
    ]
    for worker in workers:
        _, stderr = worker.communicate(timeout=120)
        assert worker.returncode == 0, stderr
    with ExperienceStore.open(path) as store:
        stats = store.stats()
        assert (stats.tasks, stats.runs, stats.versions, stats.decisions) == (1, 4, 4 * 15 + 1, 4 * 15)
        assert stats.edges["derived_from"] == 60 and stats.edges["alternative_of"] == 56
        assert sorted(d.text for d in store.decisions()) == sorted(f"{w}:{s}" for w in range(4) for s in range(15))
        assert all(r.status == "done" for r in store.runs())


INTERRUPTED = textwrap.dedent("""
    import os, sys
    from kope.memory import DecisionIn, ExperienceStore
    store = ExperienceStore.open(sys.argv[1])
    with store.transaction() as conn:
        version, _ = store.add_version(1, "half = 1\\n", conn=conn)
        store.add_decision(1, None, version.id, DecisionIn(kind="edit", text="never committed"), conn=conn)
        os._exit(3)
""")


@pytest.mark.slow
def test_an_interrupted_step_leaves_the_store_consistent(tmp_path: Path, store: ExperienceStore) -> None:
    task = store.ensure_task(load_task(RELU.task_path))
    run = store.start_run("debug", task.id, model="m", device="cpu-interpreter")
    store.record_step(run.id, task.id, SOURCE)
    with pytest.raises(RuntimeError), store.transaction() as conn:
        store.add_version(task.id, "partial = 1\n", conn=conn)
        raise RuntimeError("stopped mid-step")
    killed = subprocess.run([sys.executable, "-c", INTERRUPTED, str(tmp_path / "memory.db")], capture_output=True)
    assert killed.returncode == 3
    stats = store.stats()
    assert (stats.versions, stats.decisions) == (1, 0)
    with sqlite3.connect(tmp_path / "memory.db") as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store.record_step(run.id, task.id, "after = 1\n").new
