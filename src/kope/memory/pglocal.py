"""A throwaway PostgreSQL server on loopback: `initdb` into a directory, `pg_ctl start`, a database.

    with LocalPostgres.start() as server:
        store = ExperienceStore.open(server.url)        # postgresql+psycopg://kope@127.0.0.1:PORT/kope

For tests and benchmarks of the shared-store path on one machine, so that the PostgreSQL code runs
against a real server rather than a mock. The binaries come from the distribution's package
(Debian: `postgresql`, under /usr/lib/postgresql/N/bin). PostgreSQL refuses to run as root, so
as root the server runs as the `postgres` user (the package creates it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kope.errors import KopeError


class PostgresUnavailable(KopeError):
    """No PostgreSQL server binaries here, or psycopg is missing, or the server would not start."""


def find_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl: $PATH first, then the newest /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalPostgres:
    directory: Path
    port: int
    bindir: Path
    user: str = "kope"
    database: str = "kope"
    owned: bool = False

    @property
    def url(self) -> str:
        return self.url_of(self.database)

    def url_of(self, database: str) -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database on this server; its URL."""
        self._create_database(name)
        return self.url_of(name)

    @classmethod
    def start(cls, directory: Path | None = None, *, database: str = "kope") -> LocalPostgres:
        """Create a cluster in `directory` (default: a new one under the system's temporary directory, so
        that the `postgres` user can reach it; removed by `stop`) and start it on a free loopback port."""
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise PostgresUnavailable("psycopg is not installed: pip install 'kope[postgres]'") from None
        bindir = find_bindir()
        if bindir is None:
            raise PostgresUnavailable("no PostgreSQL server binaries (initdb): apt-get install postgresql")
        owned = directory is None
        directory = Path(tempfile.mkdtemp(prefix="kope-pg-")) if directory is None else directory
        directory.mkdir(parents=True, exist_ok=True)
        server = cls(directory=directory, port=_free_port(), bindir=bindir, database=database, owned=owned)
        if os.geteuid() == 0:
            shutil.chown(directory, "postgres", "postgres")
        data = directory / "data"
        server._run("initdb", "-D", str(data), "-U", server.user, "--auth=trust", "-E", "UTF8", "--no-sync")
        options = (
            f"-p {server.port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=60 -c shared_buffers=32MB"
        )
        server._run(
            "pg_ctl", "-D", str(data), "-l", str(directory / "server.log"), "-o", options, "-w", "-t", "60", "start"
        )
        server._create_database(database)
        return server

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            log = self.directory / "server.log"
            tail = log.read_text()[-2000:] if log.is_file() else ""
            raise PostgresUnavailable(f"{tool} failed ({done.returncode}): {done.stderr.strip()[-2000:]}\n{tail}")

    def _create_database(self, name: str) -> None:
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(
                    host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True
                ) as conn:
                    conn.execute(f'CREATE DATABASE "{name}"')
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        data = self.directory / "data"
        if data.is_dir():
            with contextlib.suppress(PostgresUnavailable):
                self._run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        if self.owned:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
