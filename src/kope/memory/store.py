"""The experience store: every run's versions, decisions, evaluations and edges, in one database.

    store = ExperienceStore.open()                      # SQLite at data_dir()/memory.db (WAL)
    store = ExperienceStore.open("postgresql+psycopg://host/kope")   # a team's shared memory
    task = store.ensure_task(load_task("task.py"))
    run = store.start_run("optimize", task.id, model="offline", device="cpu")
    step = store.record_step(run.id, task.id, source=new, parent=old_id, decision=..., result=result)

Writes go through `transaction()`: on SQLite each is `BEGIN IMMEDIATE` (one writer at a time,
others wait up to the busy timeout), so several processes writing one store lose nothing, and a
step (version, decision, evaluation, edges) is committed whole or not at all: a run interrupted at
any point leaves the store consistent. The same source is never stored twice for a task (content
hash), and error texts are kept as normalised signatures whose counts rise.

`atomic(key)` widens that to a whole run: every write inside the block (the debug loop's run, its
steps, its end) goes into one transaction, so a writer killed mid-run leaves nothing of it, and a
key makes a retried block a no-op (its second commit is refused whole). `check()` verifies the
invariants (no dangling reference, no unfinished run, every committed key's runs complete).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, Engine, and_, case, func, literal, or_, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from kope.cases.task import Task
from kope.errors import KopeError
from kope.hashing import content_hash
from kope.memory import schema
from kope.memory.engine import insert_ignore, make_engine, url_of
from kope.memory.fingerprints import (
    error_hash,
    normalize_error,
    normalized_hash,
    task_family,
    task_fingerprint,
    toolchain,
)
from kope.memory.records import (
    EDGE_KINDS,
    DecisionIn,
    DecisionRecord,
    EdgeKind,
    EdgeRecord,
    EvaluationRecord,
    ExperienceRow,
    Injected,
    InjectionRecord,
    LearnedRecord,
    PatternStats,
    RunRecord,
    StepRecord,
    StoreStats,
    TaskRecord,
    VersionRecord,
    evaluation_values,
)
from kope.memory.schema import (
    commit_key,
    decision,
    edge,
    error_signature,
    evaluation,
    injection,
    learned_pattern,
    pattern_evidence,
    run,
    task,
    version,
)
from kope.protocol.results import EvalResult


class StoreError(KopeError):
    """The experience store cannot be opened or written."""


# -- the store -------------------------------------------------------------------------------


@dataclass
class AtomicWrite:
    """What an `atomic` block did: the runs it started, and whether its key was already committed."""

    key: str | None
    runs: list[int] = field(default_factory=list)
    duplicate: bool = False
    """The key was committed before (a retry): every write of this block was rolled back."""


class ExperienceStore:
    """Typed reads and writes of the experience graph over one SQLAlchemy engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.url = engine.url.render_as_string(hide_password=True)
        self._held: ContextVar[tuple[Connection, AtomicWrite] | None] = ContextVar(
            f"kope-store-{id(self)}", default=None
        )

    @classmethod
    def open(cls, location: str | Path | None = None, *, migrate: bool = True) -> ExperienceStore:
        """Open (and create or migrate) the store at a SQLAlchemy URL or a file path; None: the default file."""
        url = url_of(location)
        try:
            parsed = make_url(url)
        except (SQLAlchemyError, ValueError) as exc:
            raise StoreError(f"not a database URL: {url!r} ({exc})") from None
        try:
            engine = make_engine(parsed)
        except ImportError as exc:
            hint = " (pip install 'kope[postgres]')" if parsed.get_backend_name() == "postgresql" else ""
            raise StoreError(f"cannot open the experience store {url}: {exc}{hint}") from None
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot open the experience store {url}: {exc}") from None
        store = cls(engine)
        if migrate:
            try:
                store.migrate()
            except StoreError:
                store.close()
                raise
        return store

    def migrate(self, target: int = schema.LATEST) -> list[int]:
        """Bring the store's schema up to `target`; the versions applied."""
        try:
            with self.transaction() as conn:
                return schema.migrate(conn, target)
        except RuntimeError as exc:
            raise StoreError(f"{self.url}: {exc}") from None

    def schema_version(self) -> int:
        with self._read() as conn:
            return schema.current_version(conn)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> ExperienceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def atomic(self, key: str | None = None) -> Iterator[AtomicWrite]:
        """Every write of this thread's block in one transaction, committed when the block ends.

        Inner writes become savepoints (one that fails rolls back alone, as it would have alone).
        With `key`, the commit also records the key; if it is there already (a retried task whose
        first try committed), the whole block is rolled back and `duplicate` is set. On SQLite the
        block holds the write lock throughout, so concurrent atomic writers take turns (a block waits for its turn
        as long as the one before it runs, not the busy timeout); PostgreSQL runs them side by side.
        """
        if self._held.get() is not None:
            raise StoreError("atomic blocks of one store do not nest")
        written = AtomicWrite(key=key)
        try:
            with self.engine.connect() as conn:
                conn.execution_options(kope_write=True, kope_turn=True)
                outer = conn.begin()
                token = self._held.set((conn, written))
                try:
                    yield written
                    if key is not None:
                        fresh = insert_ignore(
                            conn, commit_key, {"key": key, "runs": written.runs, "created": time.time()}, ["key"]
                        )
                        written.duplicate = not fresh
                    if written.duplicate:
                        outer.rollback()
                    else:
                        outer.commit()
                except BaseException:
                    if outer.is_active:
                        outer.rollback()
                    raise
                finally:
                    self._held.reset(token)
        except SQLAlchemyError as exc:
            raise StoreError(f"the experience store {self.url} failed: {exc}") from exc

    def committed(self, key: str) -> bool:
        """Whether an atomic block with this key has been committed."""
        with self._read() as conn:
            return conn.execute(select(commit_key.c.key).where(commit_key.c.key == key)).first() is not None

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A write transaction: committed whole when the block ends, rolled back if it raises."""
        held = self._held.get()
        if held is not None:
            try:
                with held[0].begin_nested():
                    yield held[0]
            except SQLAlchemyError as exc:
                raise StoreError(f"the experience store {self.url} failed: {exc}") from exc
            return
        try:
            with self.engine.connect() as conn:
                conn.execution_options(kope_write=True)
                with conn.begin():
                    yield conn
        except SQLAlchemyError as exc:
            raise StoreError(f"the experience store {self.url} failed: {exc}") from exc

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        held = self._held.get()
        if held is not None:
            yield held[0]
            return
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except SQLAlchemyError as exc:
            raise StoreError(f"the experience store {self.url} failed: {exc}") from exc

    @contextmanager
    def _writing(self, conn: Connection | None) -> Iterator[Connection]:
        if conn is not None:
            yield conn
        else:
            with self.transaction() as fresh:
                yield fresh

    # -- tasks and runs --------------------------------------------------------------------

    def ensure_task(self, loaded: Task, *, family: str | None = None, conn: Connection | None = None) -> TaskRecord:
        """The task's record, created on first sight (keyed by the task file's content hash)."""
        values = {
            "hash": loaded.sha256,
            "name": loaded.name,
            "family": family or task_family(loaded),
            "signature": task_fingerprint(loaded),
            "path": str(loaded.path),
            "created": time.time(),
        }
        with self._writing(conn) as c:
            insert_ignore(c, task, values, ["hash"])
            row = c.execute(select(task).where(task.c.hash == loaded.sha256)).one()
        return TaskRecord.model_validate(row._asdict())

    def start_run(
        self, kind: str, task_id: int, *, model: str, device: str, toolchain_: str | None = None
    ) -> RunRecord:
        values = {
            "kind": kind,
            "task_id": task_id,
            "model": model,
            "device": device,
            "toolchain": toolchain_ or toolchain(),
            "started": time.time(),
            "tokens_prompt": 0,
            "tokens_completion": 0,
        }
        with self.transaction() as conn:
            run_id = conn.execute(run.insert().values(**values)).inserted_primary_key[0]  # type: ignore[index]
            row = conn.execute(select(run).where(run.c.id == run_id)).one()
        held = self._held.get()
        if held is not None:
            held[1].runs.append(int(run_id))
        return RunRecord.model_validate(row._asdict())

    def update_run(self, run_id: int, **values: Any) -> None:
        """Set fields of a run (start_version, best_version...)."""
        with self.transaction() as conn:
            conn.execute(run.update().where(run.c.id == run_id).values(**values))

    def finish_run(
        self,
        run_id: int,
        *,
        status: str,
        stop_reason: str,
        tokens_prompt: int = 0,
        tokens_completion: int = 0,
        best_version: int | None = None,
        summary: Mapping[str, Any] | None = None,
    ) -> None:
        with self.transaction() as conn:
            conn.execute(
                run.update()
                .where(run.c.id == run_id)
                .values(
                    finished=time.time(),
                    status=status,
                    stop_reason=stop_reason,
                    tokens_prompt=tokens_prompt,
                    tokens_completion=tokens_completion,
                    best_version=best_version,
                    summary=dict(summary) if summary is not None else None,
                )
            )

    # -- versions, decisions, evaluations, edges -------------------------------------------

    def add_version(self, task_id: int, source: str, *, conn: Connection | None = None) -> tuple[VersionRecord, bool]:
        """Store a source for a task unless it is there already; (record, whether it was new)."""
        digest = content_hash(source)
        with self._writing(conn) as c:
            inserted = insert_ignore(
                c,
                version,
                {
                    "task_id": task_id,
                    "hash": digest,
                    "norm_hash": normalized_hash(source),
                    "source": source,
                    "created": time.time(),
                },
                ["task_id", "hash"],
            )
            row = c.execute(select(version).where(and_(version.c.task_id == task_id, version.c.hash == digest))).one()
        return VersionRecord.model_validate(row._asdict()), inserted

    def add_decision(
        self, run_id: int, parent_id: int | None, child_id: int, made: DecisionIn, *, conn: Connection | None = None
    ) -> int:
        with self._writing(conn) as c:
            result = c.execute(
                decision.insert(),
                {
                    "run_id": run_id,
                    "parent_id": parent_id,
                    "child_id": child_id,
                    "created": time.time(),
                    **made.model_dump(),
                },
            )
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    def add_evaluation(
        self,
        version_id: int,
        result: EvalResult,
        *,
        run_id: int | None,
        scope: str,
        device: str,
        signature_text: str | None = None,
        conn: Connection | None = None,
    ) -> EvaluationRecord:
        """Record an evaluation; its error (or `signature_text`) is counted under a normalised signature."""
        values = evaluation_values(result)
        sig_text = signature_text
        if sig_text is None and result.error is not None:
            sig_text = normalize_error(result.error.message, result.error.kind)
        with self._writing(conn) as c:
            values.update(
                version_id=version_id,
                run_id=run_id,
                scope=scope,
                device=device,
                toolchain=toolchain(),
                created=time.time(),
                error_signature=self.count_signature(sig_text, conn=c) if sig_text else None,
            )
            eval_id = c.execute(evaluation.insert(), values).inserted_primary_key[0]  # type: ignore[index]
            row = c.execute(select(evaluation).where(evaluation.c.id == eval_id)).one()
        return EvaluationRecord.model_validate(row._asdict())

    def count_signature(self, text: str, *, conn: Connection | None = None) -> str:
        """Count one occurrence of a signature text; its hash."""
        digest = error_hash(text)
        now = time.time()
        with self._writing(conn) as c:
            inserted = insert_ignore(
                c,
                error_signature,
                {"hash": digest, "text": text, "count": 1, "first_seen": now, "last_seen": now},
                ["hash"],
            )
            if not inserted:
                c.execute(
                    error_signature.update()
                    .where(error_signature.c.hash == digest)
                    .values(count=error_signature.c.count + 1, last_seen=now)
                )
        return digest

    def add_edge(
        self,
        kind: EdgeKind,
        src: int,
        *,
        dst: int | None = None,
        ref: str | None = None,
        decision_id: int | None = None,
        run_id: int | None = None,
        conn: Connection | None = None,
    ) -> int:
        if kind not in EDGE_KINDS:
            raise ValueError(f"unknown edge kind {kind!r}")
        with self._writing(conn) as c:
            result = c.execute(
                edge.insert(),
                {
                    "kind": kind,
                    "src": src,
                    "dst": dst,
                    "ref": ref,
                    "decision_id": decision_id,
                    "run_id": run_id,
                    "created": time.time(),
                },
            )
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    def record_step(
        self,
        run_id: int,
        task_id: int,
        source: str,
        *,
        parent_id: int | None = None,
        made: DecisionIn | None = None,
        result: EvalResult | None = None,
        scope: str = "all",
        device: str = "cpu-interpreter",
        evidence: Mapping[str, int | None] | None = None,
        signature_text: str | None = None,
    ) -> StepRecord:
        """One step, atomically: the version, the decision that made it, its evaluation and its edges.

        Edges: `derived_from` (child → parent), `alternative_of` (child → the sibling tried just before it
        from the same parent in this run: siblings form a chain in the order they were tried),
        `used_evidence` (child → each injected item, keyed by its reference — `decision:N`, `pattern:ID`... —
        and pointing at the version that item's evidence produced, where there is one).
        """
        with self.transaction() as conn:
            stored, new = self.add_version(task_id, source, conn=conn)
            decision_id = None
            if made is not None:
                decision_id = self.add_decision(run_id, parent_id, stored.id, made, conn=conn)
            if parent_id is not None and parent_id != stored.id:
                previous = conn.execute(
                    select(edge.c.src)
                    .where(
                        and_(
                            edge.c.kind == "derived_from",
                            edge.c.dst == parent_id,
                            edge.c.run_id == run_id,
                            edge.c.src != stored.id,
                        )
                    )
                    .order_by(edge.c.id.desc())
                    .limit(1)
                ).scalar()
                self.add_edge(
                    "derived_from", stored.id, dst=parent_id, decision_id=decision_id, run_id=run_id, conn=conn
                )
                if previous is not None:
                    self.add_edge("alternative_of", stored.id, dst=previous, run_id=run_id, conn=conn)
            for item, target in (evidence or {}).items():
                self.add_edge(
                    "used_evidence", stored.id, dst=target, ref=item, decision_id=decision_id, run_id=run_id, conn=conn
                )
            record = None
            if result is not None:
                record = self.add_evaluation(
                    stored.id,
                    result,
                    run_id=run_id,
                    scope=scope,
                    device=device,
                    signature_text=signature_text,
                    conn=conn,
                )
        return StepRecord(version=stored, new=new, decision_id=decision_id, evaluation=record)

    # -- pattern evidence, learned patterns, injections ------------------------------------

    def add_pattern_evidence(
        self,
        pattern: str,
        outcome: Literal["applied", "fixed"],
        *,
        device: str,
        task_id: int | None = None,
        version_id: int | None = None,
        run_id: int | None = None,
    ) -> int:
        with self.transaction() as conn:
            result = conn.execute(
                pattern_evidence.insert().values(
                    pattern=pattern,
                    outcome=outcome,
                    device=device,
                    task_id=task_id,
                    version_id=version_id,
                    run_id=run_id,
                    created=time.time(),
                )
            )
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    def mark_fixed(self, run_id: int, version_id: int) -> int:
        """Turn a run's `applied` evidence for `version_id` into `fixed`; the rows changed."""
        with self.transaction() as conn:
            result = conn.execute(
                pattern_evidence.update()
                .where(
                    and_(
                        pattern_evidence.c.run_id == run_id,
                        pattern_evidence.c.version_id == version_id,
                        pattern_evidence.c.outcome == "applied",
                    )
                )
                .values(outcome="fixed")
            )
            return int(result.rowcount)

    def pattern_stats(self, patterns: Iterable[str] | None = None) -> dict[str, PatternStats]:
        """Per pattern: how often it was applied and how often it fixed the kernel."""
        wanted = list(patterns) if patterns is not None else None
        query = select(
            pattern_evidence.c.pattern,
            func.count(),
            func.sum(case((pattern_evidence.c.outcome == "fixed", 1), else_=0)),
        ).group_by(pattern_evidence.c.pattern)
        if wanted is not None:
            if not wanted:
                return {}
            query = query.where(pattern_evidence.c.pattern.in_(wanted))
        with self._read() as conn:
            rows = conn.execute(query).all()
        return {name: PatternStats(pattern=name, applied=int(n), fixed=int(fixed or 0)) for name, n, fixed in rows}

    def add_learned(self, values: Mapping[str, Any]) -> tuple[LearnedRecord, bool]:
        """Store a learned pattern unless one with its id exists; (record, whether it was new)."""
        with self.transaction() as conn:
            inserted = insert_ignore(conn, learned_pattern, {**values, "created": time.time()}, ["pattern_id"])
            row = conn.execute(
                select(learned_pattern).where(learned_pattern.c.pattern_id == values["pattern_id"])
            ).one()
        return LearnedRecord.model_validate(row._asdict()), inserted

    def learned(self, limit: int = 500) -> list[LearnedRecord]:
        with self._read() as conn:
            rows = conn.execute(select(learned_pattern).order_by(learned_pattern.c.id.desc()).limit(limit)).all()
        return [LearnedRecord.model_validate(r._asdict()) for r in rows]

    def log_injections(
        self, prompt_id: str, items: Sequence[Injected], *, run_id: int | None, version_id: int | None
    ) -> None:
        if not items:
            return
        now = time.time()
        with self.transaction() as conn:
            conn.execute(
                injection.insert(),
                [
                    {
                        **item.model_dump(),
                        "prompt_id": prompt_id,
                        "run_id": run_id,
                        "version_id": version_id,
                        "created": now,
                    }
                    for item in items
                ],
            )

    def injection_outcome(self, prompt_id: str, outcome: str, produced_version: int | None = None) -> None:
        """What followed a prompt: the version it produced and how that went."""
        with self.transaction() as conn:
            conn.execute(
                injection.update()
                .where(injection.c.prompt_id == prompt_id)
                .values(outcome=outcome[:200], produced_version=produced_version)
            )

    def injections(self, prompt_id: str | None = None, run_id: int | None = None) -> list[InjectionRecord]:
        query = select(injection).order_by(injection.c.id)
        if prompt_id is not None:
            query = query.where(injection.c.prompt_id == prompt_id)
        if run_id is not None:
            query = query.where(injection.c.run_id == run_id)
        with self._read() as conn:
            return [InjectionRecord.model_validate(r._asdict()) for r in conn.execute(query).all()]

    # -- reads -----------------------------------------------------------------------------

    def get_task(self, task_id: int) -> TaskRecord | None:
        return self._one(task, task_id, TaskRecord)

    def get_run(self, run_id: int) -> RunRecord | None:
        return self._one(run, run_id, RunRecord)

    def get_version(self, version_id: int) -> VersionRecord | None:
        return self._one(version, version_id, VersionRecord)

    def get_decision(self, decision_id: int) -> DecisionRecord | None:
        return self._one(decision, decision_id, DecisionRecord)

    def _one(self, table: Any, key: int, model: Any) -> Any:
        with self._read() as conn:
            row = conn.execute(select(table).where(table.c.id == key)).one_or_none()
        return model.model_validate(row._asdict()) if row is not None else None

    def tasks(self) -> list[TaskRecord]:
        with self._read() as conn:
            return [TaskRecord.model_validate(r._asdict()) for r in conn.execute(select(task).order_by(task.c.id))]

    def runs(self, task_id: int | None = None, kind: str | None = None) -> list[RunRecord]:
        query = select(run).order_by(run.c.id)
        if task_id is not None:
            query = query.where(run.c.task_id == task_id)
        if kind is not None:
            query = query.where(run.c.kind == kind)
        with self._read() as conn:
            return [RunRecord.model_validate(r._asdict()) for r in conn.execute(query)]

    def versions(self, task_id: int | None = None, ids: Iterable[int] | None = None) -> list[VersionRecord]:
        query = select(version).order_by(version.c.id)
        if task_id is not None:
            query = query.where(version.c.task_id == task_id)
        if ids is not None:
            query = query.where(version.c.id.in_(list(ids)))
        with self._read() as conn:
            return [VersionRecord.model_validate(r._asdict()) for r in conn.execute(query)]

    def decisions(self, run_id: int | None = None, child_id: int | None = None) -> list[DecisionRecord]:
        query = select(decision).order_by(decision.c.id)
        if run_id is not None:
            query = query.where(decision.c.run_id == run_id)
        if child_id is not None:
            query = query.where(decision.c.child_id == child_id)
        with self._read() as conn:
            return [DecisionRecord.model_validate(r._asdict()) for r in conn.execute(query)]

    def evaluations(self, version_id: int | None = None, run_id: int | None = None) -> list[EvaluationRecord]:
        query = select(evaluation).order_by(evaluation.c.id)
        if version_id is not None:
            query = query.where(evaluation.c.version_id == version_id)
        if run_id is not None:
            query = query.where(evaluation.c.run_id == run_id)
        with self._read() as conn:
            return [EvaluationRecord.model_validate(r._asdict()) for r in conn.execute(query)]

    def edges(
        self, kind: str | None = None, run_id: int | None = None, version_id: int | None = None
    ) -> list[EdgeRecord]:
        query = select(edge).order_by(edge.c.id)
        if kind is not None:
            query = query.where(edge.c.kind == kind)
        if run_id is not None:
            query = query.where(edge.c.run_id == run_id)
        if version_id is not None:
            query = query.where(or_(edge.c.src == version_id, edge.c.dst == version_id))
        with self._read() as conn:
            return [EdgeRecord.model_validate(r._asdict()) for r in conn.execute(query)]

    def lineage(self, version_id: int, run_id: int | None = None) -> list[int]:
        """The versions `version_id` derives from, nearest first (a recursive query over `derived_from`)."""
        condition = edge.c.kind == "derived_from"
        if run_id is not None:
            condition = and_(condition, edge.c.run_id == run_id)
        base = (
            select(edge.c.dst.label("vid"), literal(1).label("depth"))
            .where(and_(condition, edge.c.src == version_id))
            .cte("lineage", recursive=True)
        )
        step = select(edge.c.dst, base.c.depth + 1).where(and_(condition, edge.c.src == base.c.vid, base.c.depth < 200))
        tree = base.union(step)
        with self._read() as conn:
            rows = conn.execute(
                select(tree.c.vid, func.min(tree.c.depth)).group_by(tree.c.vid).order_by(func.min(tree.c.depth))
            ).all()
        return [int(r[0]) for r in rows if r[0] is not None]

    def experience(
        self,
        *,
        exclude_run: int | None = None,
        run_id: int | None = None,
        kinds: Sequence[str] | None = None,
        limit: int = 400,
    ) -> list[ExperienceRow]:
        """Decisions with their outcome and the parent's time, newest first (each version's first
        evaluation in the run: the one the decision was judged by, not later confirmation runs)."""
        child_eval = (
            select(evaluation.c.version_id, evaluation.c.run_id, func.min(evaluation.c.id).label("eid"))
            .group_by(evaluation.c.version_id, evaluation.c.run_id)
            .subquery()
        )
        child = evaluation.alias("child_eval")
        parent = evaluation.alias("parent_eval")
        parent_latest = (
            select(evaluation.c.version_id, evaluation.c.run_id, func.min(evaluation.c.id).label("eid"))
            .where(evaluation.c.time_ms.is_not(None))
            .group_by(evaluation.c.version_id, evaluation.c.run_id)
            .subquery()
        )
        query = (
            select(
                decision.c.id.label("decision_id"),
                decision.c.run_id,
                task.c.id.label("task_id"),
                task.c.name.label("task_name"),
                task.c.family,
                task.c.signature,
                decision.c.kind,
                decision.c.text,
                decision.c.diff,
                decision.c.params,
                decision.c.parent_id,
                decision.c.child_id,
                child.c.status,
                child.c.correct,
                child.c.error_signature,
                child.c.error_kind,
                child.c.time_ms,
                parent.c.time_ms.label("parent_time_ms"),
                child.c.timing_method,
                child.c.device,
                decision.c.created,
            )
            .join(run, run.c.id == decision.c.run_id)
            .join(task, task.c.id == run.c.task_id)
            .outerjoin(
                child_eval,
                and_(child_eval.c.version_id == decision.c.child_id, child_eval.c.run_id == decision.c.run_id),
            )
            .outerjoin(child, child.c.id == child_eval.c.eid)
            .outerjoin(
                parent_latest,
                and_(parent_latest.c.version_id == decision.c.parent_id, parent_latest.c.run_id == decision.c.run_id),
            )
            .outerjoin(parent, parent.c.id == parent_latest.c.eid)
            .order_by(decision.c.id.desc())
            .limit(limit)
        )
        if exclude_run is not None:
            query = query.where(decision.c.run_id != exclude_run)
        if run_id is not None:
            query = query.where(decision.c.run_id == run_id)
        if kinds is not None:
            query = query.where(decision.c.kind.in_(list(kinds)))
        with self._read() as conn:
            return [ExperienceRow.model_validate(r._asdict()) for r in conn.execute(query).all()]

    def best_configs(self, device: str, *, exclude_task: int | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """Finished optimize runs on `device` that found a faster configuration, best first:
        `{config, speedup, family, task, task_id, run_id}`."""
        query = (
            select(run.c.id, run.c.summary, task.c.family, task.c.name, task.c.id.label("task_id"))
            .join(task, task.c.id == run.c.task_id)
            .where(and_(run.c.kind == "optimize", run.c.device == device, run.c.summary.is_not(None)))
            .order_by(run.c.id.desc())
            .limit(500)
        )
        if exclude_task is not None:
            query = query.where(run.c.task_id != exclude_task)
        found = []
        with self._read() as conn:
            for run_id, summary, family, name, task_id in conn.execute(query).all():
                data = summary if isinstance(summary, dict) else json.loads(summary or "{}")
                config, speedup = data.get("config"), data.get("speedup_vs_start")
                if config and speedup and speedup > 1.0:
                    found.append(
                        {
                            "config": config,
                            "speedup": float(speedup),
                            "family": family,
                            "task": name,
                            "task_id": task_id,
                            "run_id": run_id,
                        }
                    )
        found.sort(key=lambda item: -item["speedup"])
        return found[:limit]

    def stats(self) -> StoreStats:
        with self._read() as conn:

            def count(table: Any) -> int:
                return int(conn.execute(select(func.count()).select_from(table)).scalar() or 0)

            edges: dict[str, int] = {
                str(k): int(n) for k, n in conn.execute(select(edge.c.kind, func.count()).group_by(edge.c.kind)).all()
            }
            kinds: dict[str, int] = {
                str(k): int(n) for k, n in conn.execute(select(run.c.kind, func.count()).group_by(run.c.kind)).all()
            }
            stats = StoreStats(
                url=self.url,
                schema_version=schema.current_version(conn),
                tasks=count(task),
                runs=count(run),
                versions=count(version),
                decisions=count(decision),
                evaluations=count(evaluation),
                edges={k: int(edges.get(k, 0)) for k in EDGE_KINDS},
                error_signatures=count(error_signature),
                pattern_evidence=count(pattern_evidence),
                learned_patterns=count(learned_pattern),
                injections=count(injection),
                runs_by_kind={str(k): int(v) for k, v in kinds.items()},
            )
        ranked = sorted(self.pattern_stats().values(), key=lambda s: (-s.fixed, -s.applied, s.pattern))
        stats.top_patterns = [
            {"pattern": s.pattern, "applied": s.applied, "fixed": s.fixed, "rate": round(s.rate, 3)}
            for s in ranked[:10]
        ]
        return stats

    def check(self, *, open_runs: bool = False) -> list[str]:  # noqa: C901 - one query and one message per invariant, a flat list
        """The store's invariants, as a list of what breaks them (empty: consistent).

        Every reference points at a row that exists; every run is finished (unless `open_runs`: a
        writer that is not atomic may be mid-run); every decision's child and every evaluation belong
        to the run's task; every committed key names runs that exist and are finished.
        """
        problems: list[str] = []
        with self._read() as conn:

            def ids(table: Any) -> set[int]:
                return {int(r[0]) for r in conn.execute(select(table.c.id))}

            runs, versions, decisions = ids(run), ids(version), ids(decision)
            tasks = ids(task)
            version_task = {int(v): int(t) for v, t in conn.execute(select(version.c.id, version.c.task_id))}
            run_rows = conn.execute(
                select(run.c.id, run.c.task_id, run.c.finished, run.c.status, run.c.start_version, run.c.best_version)
            ).all()
            run_task = {int(r[0]): int(r[1]) for r in run_rows}
            for rid, tid, finished, status, start, best in run_rows:
                if tid not in tasks:
                    problems.append(f"run {rid}: task {tid} does not exist")
                if not open_runs and (finished is None or status is None):
                    problems.append(f"run {rid}: not finished (a partial run)")
                for name, vid in (("start_version", start), ("best_version", best)):
                    if vid is not None and vid not in versions:
                        problems.append(f"run {rid}: {name} {vid} does not exist")
            for vid, tid in version_task.items():
                if tid not in tasks:
                    problems.append(f"version {vid}: task {tid} does not exist")
            for did, rid, parent, child in conn.execute(
                select(decision.c.id, decision.c.run_id, decision.c.parent_id, decision.c.child_id)
            ):
                if rid not in runs:
                    problems.append(f"decision {did}: run {rid} does not exist")
                for vid in (parent, child):
                    if vid is not None and vid not in versions:
                        problems.append(f"decision {did}: version {vid} does not exist")
                if rid in run_task and child in version_task and version_task[child] != run_task[rid]:
                    problems.append(f"decision {did}: version {child} is another task's")
            for eid, vid, rid in conn.execute(select(evaluation.c.id, evaluation.c.version_id, evaluation.c.run_id)):
                if vid not in versions:
                    problems.append(f"evaluation {eid}: version {vid} does not exist")
                if rid is not None and rid not in runs:
                    problems.append(f"evaluation {eid}: run {rid} does not exist")
            for gid, src, dst, did, rid in conn.execute(
                select(edge.c.id, edge.c.src, edge.c.dst, edge.c.decision_id, edge.c.run_id)
            ):
                for vid in (src, dst):
                    if vid is not None and vid not in versions:
                        problems.append(f"edge {gid}: version {vid} does not exist")
                if did is not None and did not in decisions:
                    problems.append(f"edge {gid}: decision {did} does not exist")
                if rid is not None and rid not in runs:
                    problems.append(f"edge {gid}: run {rid} does not exist")
            finished = {int(r[0]) for r in run_rows if r[2] is not None and r[3] is not None}
            for key, listed in conn.execute(select(commit_key.c.key, commit_key.c.runs)):
                data = listed if isinstance(listed, list) else json.loads(listed or "[]")
                for rid in data:
                    if int(rid) not in finished:
                        problems.append(f"commit {key}: run {rid} is missing or unfinished")
        return problems

    def signature_counts(self, limit: int = 20) -> list[tuple[str, int]]:
        with self._read() as conn:
            rows = conn.execute(
                select(error_signature.c.text, error_signature.c.count)
                .order_by(error_signature.c.count.desc())
                .limit(limit)
            ).all()
        return [(str(t), int(n)) for t, n in rows]
