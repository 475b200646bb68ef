"""The experience store's database engine: where it lives (a URL), SQLite's set-up, and the one SQL idiom
the dialects spell differently (an insert that ignores a duplicate)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Connection, Engine, and_, create_engine, event, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import QueuePool, StaticPool

from kope import paths

BUSY_TIMEOUT_S = 60.0


def default_url() -> str:
    """`sqlite:///<data_dir>/memory.db` (`$XDG_DATA_HOME/kope/memory.db` or `~/.local/share/kope/memory.db`)."""
    return f"sqlite:///{paths.data_dir() / 'memory.db'}"


def url_of(location: str | Path | None) -> str:
    if location is None:
        return default_url()
    text = str(location)
    if text == ":memory:":
        return "sqlite://"
    return text if "://" in text else f"sqlite:///{Path(text).expanduser().resolve()}"


def make_engine(parsed: URL) -> Engine:
    """The engine for a parsed URL: SQLite (its file's folder made, WAL and the busy timeout set up) or any other."""
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        memory = database in ("", ":memory:")
        engine = create_engine(
            parsed,
            poolclass=StaticPool if memory else QueuePool,
            connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False},
        )
        sqlite_setup(engine)
        return engine
    return create_engine(parsed, pool_pre_ping=True)


def insert_ignore(conn: Connection, table: Any, values: Mapping[str, Any], keys: Sequence[str]) -> bool:
    """INSERT unless a row with the same unique `keys` exists; whether a row was inserted."""
    name = conn.dialect.name
    statement: Any
    if name == "sqlite":
        statement = sqlite.insert(table).on_conflict_do_nothing(index_elements=list(keys))
    elif name == "postgresql":
        # psycopg reports rowcount -1 for an INSERT that SQLAlchemy gives an implicit RETURNING; a row back is
        # the reliable sign that one was inserted.
        returning = (
            postgresql.insert(table)
            .on_conflict_do_nothing(index_elements=list(keys))
            .returning(*[table.c[k] for k in keys])
        )
        return conn.execute(returning, dict(values)).first() is not None
    else:
        exists = conn.execute(
            select(func.count()).select_from(table).where(and_(*[table.c[k] == values[k] for k in keys]))
        ).scalar()
        if exists:
            return False
        conn.execute(table.insert().values(**values))
        return True
    return bool(conn.execute(statement, dict(values)).rowcount)


def sqlite_setup(engine: Engine) -> None:
    """WAL, a busy timeout, foreign keys, and transactions that kope begins itself (IMMEDIATE for writes)."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        if not options.get("kope_write"):
            conn.exec_driver_sql("BEGIN DEFERRED")
        elif options.get("kope_turn"):
            _take_turn(conn)
        else:
            conn.exec_driver_sql("BEGIN IMMEDIATE")


TURN_POLL_S = 0.5


def _take_turn(conn: Connection) -> None:
    """BEGIN IMMEDIATE for a block that holds the write lock as long as it runs (`ExperienceStore.atomic`): another
    such block can hold it for minutes (a whole repair), longer than any busy timeout, so this waits for its turn
    without a limit. SQLite gives the lock back when its holder ends or dies, so the wait ends."""
    while True:
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            return
        except OperationalError as exc:
            if "locked" not in str(exc.orig) and "busy" not in str(exc.orig):
                raise
            time.sleep(TURN_POLL_S)
