"""The experience store's tables (SQLAlchemy Core) and its ordered migrations.

    task ─┬─ version ─┬─ evaluation          (pass/fail, errors, timing, device, toolchain)
          │           ├─ edge                (derived_from, alternative_of, used_evidence, fixed_by)
          │           └─ pattern_evidence    (a pattern applied to a version; did it fix it?)
          └─ run ───── decision              (parent version → child version: what changed and why)
    learned_pattern   repairs that matched no knowledge-base pattern
    injection         what the context packer put into a prompt, and what followed
    error_signature   normalised error texts, counted, never duplicated
    schema_version    one row: the version of this layout

Every layout change is a migration appended to `MIGRATIONS`; a store records the version it is at
and `migrate` applies the missing ones, each in its own transaction. Version 1 was the graph alone
(tasks, runs, versions, decisions, evaluations, edges); version 2 added what the store learns from
(pattern evidence, learned patterns, the injection log, error signatures); version 3 added
`commit_key`, the keys of atomic writes (`ExperienceStore.atomic`), so a retried writer adds nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    text,
)

LATEST = 3
"""The schema version this kope writes."""


def define(meta: MetaData, at: int = LATEST) -> MetaData:
    """The tables as they are at schema version `at`, added to `meta`."""
    Table("schema_version", meta, Column("version", Integer, nullable=False))
    Table(
        "task",
        meta,
        Column("id", Integer, primary_key=True),
        Column("hash", String(64), nullable=False, unique=True),
        Column("name", String(200), nullable=False),
        Column("family", String(64), nullable=False),
        Column("signature", Text, nullable=False),
        Column("path", Text, nullable=False),
        Column("created", Float, nullable=False),
    )
    Table(
        "run",
        meta,
        Column("id", Integer, primary_key=True),
        Column("kind", String(16), nullable=False),
        Column("task_id", Integer, ForeignKey("task.id"), nullable=False, index=True),
        Column("model", String(200), nullable=False),
        Column("device", String(64), nullable=False),
        Column("toolchain", String(200), nullable=False),
        Column("started", Float, nullable=False),
        Column("finished", Float),
        Column("status", String(32)),
        Column("stop_reason", String(64)),
        Column("tokens_prompt", Integer, nullable=False, default=0),
        Column("tokens_completion", Integer, nullable=False, default=0),
        Column("start_version", Integer),
        Column("best_version", Integer),
        Column("summary", JSON),
    )
    Table(
        "version",
        meta,
        Column("id", Integer, primary_key=True),
        Column("task_id", Integer, ForeignKey("task.id"), nullable=False),
        Column("hash", String(64), nullable=False),
        Column("norm_hash", String(64), nullable=False, index=True),
        Column("source", Text, nullable=False),
        Column("created", Float, nullable=False),
        UniqueConstraint("task_id", "hash", name="uq_version_task_hash"),
    )
    Table(
        "decision",
        meta,
        Column("id", Integer, primary_key=True),
        Column("run_id", Integer, ForeignKey("run.id"), nullable=False, index=True),
        Column("parent_id", Integer, ForeignKey("version.id")),
        Column("child_id", Integer, ForeignKey("version.id"), nullable=False, index=True),
        Column("kind", String(32), nullable=False),
        Column("text", Text, nullable=False),
        Column("diff", Text, nullable=False),
        Column("params", JSON),
        Column("prompt_id", String(64)),
        Column("tokens_prompt", Integer, nullable=False, default=0),
        Column("tokens_completion", Integer, nullable=False, default=0),
        Column("created", Float, nullable=False),
    )
    Table(
        "evaluation",
        meta,
        Column("id", Integer, primary_key=True),
        Column("version_id", Integer, ForeignKey("version.id"), nullable=False, index=True),
        Column("run_id", Integer, ForeignKey("run.id"), index=True),
        Column("scope", String(16), nullable=False),
        Column("status", String(16), nullable=False),
        Column("correct", Boolean, nullable=False),
        Column("cases_passed", Integer, nullable=False),
        Column("cases_total", Integer, nullable=False),
        Column("error_kind", String(32)),
        Column("error_message", Text),
        Column("integrity", String(16), nullable=False),
        Column("time_ms", Float),
        Column("reference_ms", Float),
        Column("timing_method", String(32)),
        Column("speedup", Float),
        Column("device", String(64), nullable=False),
        Column("toolchain", String(200), nullable=False),
        Column("created", Float, nullable=False),
        *([Column("error_signature", String(64))] if at >= 2 else []),
    )
    Table(
        "edge",
        meta,
        Column("id", Integer, primary_key=True),
        Column("kind", String(16), nullable=False),
        Column("src", Integer, ForeignKey("version.id"), nullable=False),
        Column("dst", Integer, ForeignKey("version.id")),
        Column("ref", String(200)),
        Column("decision_id", Integer, ForeignKey("decision.id")),
        Column("run_id", Integer, ForeignKey("run.id")),
        Column("created", Float, nullable=False),
        Index("ix_edge_kind_src", "kind", "src"),
        Index("ix_edge_kind_dst", "kind", "dst"),
        Index("ix_edge_ref", "ref"),
    )
    if at < 2:
        return meta
    Table(
        "error_signature",
        meta,
        Column("hash", String(64), primary_key=True),
        Column("text", Text, nullable=False),
        Column("count", Integer, nullable=False),
        Column("first_seen", Float, nullable=False),
        Column("last_seen", Float, nullable=False),
    )
    Table(
        "pattern_evidence",
        meta,
        Column("id", Integer, primary_key=True),
        Column("pattern", String(200), nullable=False, index=True),
        Column("task_id", Integer, ForeignKey("task.id")),
        Column("version_id", Integer, ForeignKey("version.id")),
        Column("run_id", Integer, ForeignKey("run.id")),
        Column("outcome", String(16), nullable=False),
        Column("device", String(64), nullable=False),
        Column("created", Float, nullable=False),
    )
    Table(
        "learned_pattern",
        meta,
        Column("id", Integer, primary_key=True),
        Column("pattern_id", String(64), nullable=False, unique=True),
        Column("task_id", Integer, ForeignKey("task.id"), nullable=False),
        Column("family", String(64), nullable=False),
        Column("error_signature", String(64)),
        Column("title", Text, nullable=False),
        Column("explanation", Text, nullable=False),
        Column("diff", Text, nullable=False),
        Column("keywords", JSON, nullable=False),
        Column("features", JSON, nullable=False),
        Column("cues", JSON, nullable=False),
        Column("source_version", Integer, ForeignKey("version.id")),
        Column("fixed_version", Integer, ForeignKey("version.id")),
        Column("created", Float, nullable=False),
    )
    Table(
        "injection",
        meta,
        Column("id", Integer, primary_key=True),
        Column("prompt_id", String(64), nullable=False, index=True),
        Column("run_id", Integer, ForeignKey("run.id")),
        Column("version_id", Integer, ForeignKey("version.id")),
        Column("item", String(200), nullable=False),
        Column("section", String(32), nullable=False),
        Column("level", Integer, nullable=False),
        Column("tokens", Integer, nullable=False),
        Column("rank", Integer, nullable=False),
        Column("score", Float, nullable=False),
        Column("relevance", Float, nullable=False),
        Column("utility", Float, nullable=False),
        Column("recency", Float, nullable=False),
        Column("redundancy", Float, nullable=False),
        Column("produced_version", Integer, ForeignKey("version.id")),
        Column("outcome", String(200)),
        Column("created", Float, nullable=False),
    )
    if at < 3:
        return meta
    Table(
        "commit_key",
        meta,
        Column("key", String(200), primary_key=True),
        Column("runs", JSON, nullable=False),
        Column("created", Float, nullable=False),
    )
    return meta


metadata = define(MetaData())
schema_version = metadata.tables["schema_version"]
task = metadata.tables["task"]
run = metadata.tables["run"]
version = metadata.tables["version"]
decision = metadata.tables["decision"]
evaluation = metadata.tables["evaluation"]
edge = metadata.tables["edge"]
error_signature = metadata.tables["error_signature"]
pattern_evidence = metadata.tables["pattern_evidence"]
learned_pattern = metadata.tables["learned_pattern"]
injection = metadata.tables["injection"]
commit_key = metadata.tables["commit_key"]
_ADDED_IN_2 = ("error_signature", "pattern_evidence", "learned_pattern", "injection")


def _v1(connection: Connection) -> None:
    """The graph: tasks, runs, versions, decisions, evaluations and edges."""
    layout = define(MetaData(), 1)
    layout.create_all(connection, tables=[t for name, t in layout.tables.items() if name != "schema_version"])


def _v2(connection: Connection) -> None:
    """What the store learns from: pattern evidence, learned patterns, the injection log, error signatures."""
    connection.execute(text("ALTER TABLE evaluation ADD COLUMN error_signature VARCHAR(64)"))
    layout = define(MetaData(), 2)
    for name in _ADDED_IN_2:
        layout.tables[name].create(connection)


def _v3(connection: Connection) -> None:
    """The keys of atomic writes, so that a retried writer's second commit is refused whole."""
    define(MetaData(), 3).tables["commit_key"].create(connection)


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_v1, _v2, _v3)
"""MIGRATIONS[i] takes a store from version i to version i + 1."""
assert len(MIGRATIONS) == LATEST


def current_version(connection: Connection) -> int:
    """The version a store is at (0: empty)."""
    if not inspect(connection).has_table("schema_version"):
        return 0
    found = connection.execute(schema_version.select()).scalar()
    return int(found or 0)


def migrate(connection: Connection, target: int = LATEST) -> list[int]:
    """Apply the migrations from the store's version up to `target`; the versions applied.

    The caller holds a write transaction, so concurrent openers apply each migration once (on
    PostgreSQL a transaction-scoped advisory lock serialises them, since its DDL does not).
    """
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(7316001)"))
    if not inspect(connection).has_table("schema_version"):
        schema_version.create(connection)
    at = current_version(connection)
    if at > LATEST:
        raise RuntimeError(f"the store is at schema version {at}, newer than this kope ({LATEST}): upgrade kope")
    applied: list[int] = []
    for index in range(at, min(target, LATEST)):
        MIGRATIONS[index](connection)
        applied.append(index + 1)
    if applied:
        connection.execute(schema_version.delete())
        connection.execute(schema_version.insert().values(version=applied[-1]))
    return applied
