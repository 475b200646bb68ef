"""Start sandboxed jobs: through a fork server (fast) or a fresh interpreter per job (simple).

The fork server is a Python process started with a clean environment that imports torch, triton
and kope's worker once, then forks a supervisor per job (see `sandbox`). It never imports task or
candidate code itself: only its forked children do. A job's fixed cost is therefore a fork, not an
interpreter start plus the imports of torch and triton.

Sides of the process boundary: the fork server and the supervisors it forks run kope's parent-side
code (this module, `sandbox`, `confine`); only the worker process that a supervisor forks loads task
and candidate code. This module is therefore the one parent-side module that names
`kope.evaluate.inside` (the worker), by module path, to start that process.

Protocol (JSON lines): the client writes `{"id", "job_dir", "limits"}`; the server answers
`{"ready": true}` once at start, then `{"id", "status"}` when a job's supervisor has exited. The
supervisor's `outcome.json` in the job directory says how the job ended.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from dataclasses import asdict
from pathlib import Path
from typing import IO, Protocol

from kope.errors import SandboxError
from kope.evaluate.confine import Settings, base_view
from kope.evaluate.sandbox import (
    Outcome,
    SandboxLimits,
    become_subreaper,
    clean_environment,
    kill_descendants,
    read_outcome,
    supervise,
)

_READY_TIMEOUT_S = 180.0
_SERVER_CWD = "/"
"""The working directory of kope's own processes (fork server, supervisors): never a directory others can
write, such as /tmp or a job directory, because `python -m` puts the working directory on the import path."""
_SAFE_PATH = ("-P",)
"""`-P`: do not put the working directory (or the script's) on `sys.path` at all."""


class Runner(Protocol):
    """Runs one prepared job directory under limits and reports how it ended."""

    def run(self, job_dir: Path, limits: SandboxLimits) -> Outcome: ...

    def close(self) -> None: ...


def _server_environment() -> dict[str, str]:
    env = clean_environment(extra_allow=("PYTHONPATH",))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _limits_from_json(data: dict[str, object]) -> SandboxLimits:
    fields = dict(data)
    sandbox = fields.pop("sandbox", None)
    settings = (
        Settings(**{**sandbox, "hidden": tuple(sandbox.get("hidden", ()))}) if isinstance(sandbox, dict) else Settings()
    )
    return SandboxLimits(**fields, sandbox=settings)  # type: ignore[arg-type]


class ForkServer:
    """Client of a fork server; thread-safe, several jobs may run at once."""

    def __init__(self, python: str | None = None) -> None:
        self._python = python or sys.executable
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._pending: dict[str, Future[int]] = {}
        self._ids = itertools.count()
        self._reader: threading.Thread | None = None
        self._ready = threading.Event()
        self._log: IO[bytes] | None = None
        self._failure: str | None = None

    def start(self) -> ForkServer:
        with self._lock:
            if self._proc is not None:
                return self
            self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
            self._proc = subprocess.Popen(
                [self._python, *_SAFE_PATH, "-m", "kope.evaluate.runner", "serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env=_server_environment(),
                cwd=_SERVER_CWD,
                start_new_session=True,
            )
            self._reader = threading.Thread(target=self._read_replies, name="kope-forkserver", daemon=True)
            self._reader.start()
        if not self._ready.wait(_READY_TIMEOUT_S) or self._failure:
            reason = self._failure or "it did not report ready in time"
            self.close()
            raise SandboxError(f"the fork server did not start: {reason}")
        return self

    def _read_replies(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        for raw in proc.stdout:
            try:
                reply = json.loads(raw)
            except ValueError:
                continue
            if reply.get("ready"):
                self._ready.set()
                continue
            with self._lock:
                future = self._pending.pop(str(reply.get("id")), None)
            if future is not None:
                future.set_result(int(reply.get("status", -1)))
        self._failure = self._failure or f"the fork server exited: {self._server_log()}"
        self._ready.set()
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(SandboxError(self._failure))

    def _server_log(self) -> str:
        if self._log is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0)
            return self._log.read()[-4000:].decode(errors="replace").strip()
        return ""

    def submit(self, job_dir: Path, limits: SandboxLimits) -> Future[int]:
        if self._proc is None:
            self.start()
        future: Future[int] = Future()
        job_id = str(next(self._ids))
        line = json.dumps({"id": job_id, "job_dir": str(job_dir), "limits": _limits_to_json(limits)}) + "\n"
        with self._lock:
            if self._failure:
                raise SandboxError(self._failure)
            self._pending[job_id] = future
            proc = self._proc
            assert proc is not None and proc.stdin is not None
            try:
                proc.stdin.write(line.encode())
                proc.stdin.flush()
            except (BrokenPipeError, OSError) as exc:
                self._pending.pop(job_id, None)
                raise SandboxError(f"the fork server is gone: {exc}; {self._server_log()}") from None
        return future

    def run(self, job_dir: Path, limits: SandboxLimits) -> Outcome:
        self.submit(job_dir, limits).result()
        return _outcome_or_error(job_dir)

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> ForkServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class SpawnRunner:
    """One fresh interpreter per job: no shared state at all, at the price of an import per job."""

    def __init__(self, python: str | None = None) -> None:
        self._python = python or sys.executable

    def run(self, job_dir: Path, limits: SandboxLimits) -> Outcome:
        subprocess.run(
            [
                self._python,
                *_SAFE_PATH,
                "-m",
                "kope.evaluate.runner",
                "job",
                str(job_dir),
                json.dumps(_limits_to_json(limits)),
            ],
            env=_server_environment(),
            cwd=_SERVER_CWD,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            start_new_session=True,
        )
        return _outcome_or_error(job_dir)

    def close(self) -> None:
        return None


def _limits_to_json(limits: SandboxLimits) -> dict[str, object]:
    data = asdict(limits)
    data["extra_env"] = dict(limits.extra_env)
    data["sandbox"]["hidden"] = list(limits.sandbox.hidden)
    return data


def _outcome_or_error(job_dir: Path) -> Outcome:
    outcome = read_outcome(job_dir)
    if outcome is None:
        raise SandboxError(f"the supervisor of {job_dir} left no outcome")
    return outcome


def _run_worker(job_dir: Path) -> int:
    from kope.evaluate.inside import worker

    return worker.run_job(job_dir)


def _serve(in_fd: int, out_fd: int) -> None:
    """The fork server's loop: preload, then fork a supervisor per request."""
    os.environ["TRITON_INTERPRET"] = "1"
    import kope.evaluate.inside.worker as worker

    worker.preload()
    os.environ.pop("TRITON_INTERPRET", None)
    supervise_ = supervise

    become_subreaper()
    os.write(out_fd, json.dumps({"ready": True, "pid": os.getpid()}).encode() + b"\n")
    buffer = b""
    running: dict[int, str] = {}
    stdin_open = True
    while stdin_open or running:
        readable = [in_fd] if stdin_open else []
        ready, _, _ = select.select(readable, [], [], 0.02)
        if ready:
            chunk = os.read(in_fd, 1 << 16)
            if not chunk:
                stdin_open = False
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                request = json.loads(line)
                limits = _limits_from_json(request["limits"])
                if limits.sandbox.mode != "off":
                    base_view(limits.sandbox.hidden)  # computed once here, inherited by every fork
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the supervisor
                    code = 0
                    try:
                        os.close(in_fd)
                        os.close(out_fd)
                        supervise_(Path(request["job_dir"]), limits, worker.run_job)
                    except BaseException:
                        code = 1
                    os._exit(code)
                running[pid] = request["id"]
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            job_id = running.pop(pid, None)
            if job_id is not None:
                reply = {"id": job_id, "status": os.waitstatus_to_exitcode(status)}
                os.write(out_fd, json.dumps(reply).encode() + b"\n")
    kill_descendants()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "serve":
        out_fd = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        _serve(0, out_fd)
        return 0
    if len(args) == 3 and args[0] == "job":
        # Importing kope started library threads here; a forked child is single-threaded again,
        # which the user namespace of the sandbox needs.
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the supervisor
            code = 0
            try:
                supervise(Path(args[1]), _limits_from_json(json.loads(args[2])), _run_worker)
            except BaseException:
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)
    print("usage: python -m kope.evaluate.runner serve | job JOB_DIR LIMITS_JSON", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
