"""The supervisor, driven with plain Python entries (no torch), each in a process of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kope.evaluate.confine import Settings
from kope.evaluate.sandbox import Outcome, SandboxLimits, clean_environment, read_outcome, supervise

MARKER = "kope-sandbox-test-orphan"


def run_supervised(tmp_path: Path, entry: Callable[[Path], int], limits: SandboxLimits | None = None) -> Outcome:
    """supervise() adopts and kills every descendant of its process, so it gets a process of its own."""
    job = tmp_path / "job"
    job.mkdir()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked supervisor
        try:
            supervise(job, limits or SandboxLimits(timeout_s=10), entry)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    outcome = read_outcome(job)
    assert outcome is not None
    return outcome


def marker_processes() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if MARKER.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_exit_code_and_working_directory(tmp_path: Path) -> None:
    def entry(job: Path) -> int:
        (job / "cwd.txt").write_text(os.getcwd())
        return 3

    outcome = run_supervised(tmp_path, entry)
    assert outcome.exit_code == 3 and outcome.signal is None
    assert (tmp_path / "job" / "cwd.txt").read_text() == str(tmp_path / "job" / "work")


def test_signal_is_reported(tmp_path: Path) -> None:
    def entry(job: Path) -> int:
        os.kill(os.getpid(), signal.SIGSEGV)
        return 0

    outcome = run_supervised(tmp_path, entry)
    assert outcome.signal_name == "SIGSEGV"


def test_timeout_kills_the_worker(tmp_path: Path) -> None:
    def entry(job: Path) -> int:
        time.sleep(60)
        return 0

    began = time.monotonic()
    outcome = run_supervised(tmp_path, entry, SandboxLimits(timeout_s=1))
    assert outcome.timed_out and outcome.signal_name == "SIGKILL"
    assert time.monotonic() - began < 10


def test_output_flood_is_capped(tmp_path: Path) -> None:
    def entry(job: Path) -> int:
        chunk = "z" * 1023 + "\n"
        for _ in range(20 * 1024):
            sys.stdout.write(chunk)
        sys.stderr.write("the end\n")
        return 0

    outcome = run_supervised(tmp_path, entry, SandboxLimits(timeout_s=30, output_bytes=4096))
    assert outcome.exit_code == 0
    assert outcome.stdout_bytes == 20 * 1024 * 1024
    assert len(outcome.stdout) < 4096 + 100 and "bytes omitted" in outcome.stdout
    assert outcome.stderr == "the end\n"


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_no_orphan_survives(tmp_path: Path, mode: str) -> None:
    def entry(job: Path) -> int:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", MARKER], start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", MARKER])
            os._exit(0)
        time.sleep(0.5)
        return 0

    outcome = run_supervised(tmp_path, entry, SandboxLimits(timeout_s=10, sandbox=Settings(mode=mode)))  # type: ignore[arg-type]
    assert outcome.exit_code == 0
    if mode == "off":  # the supervisor finds and kills them; in a PID namespace the kernel does when its init exits
        assert outcome.leftover_processes >= 2
    assert marker_processes() == []


def test_memory_limit(tmp_path: Path) -> None:
    def entry(job: Path) -> int:
        hog = []
        while True:
            hog.append(bytearray(32 * 1024 * 1024))

    outcome = run_supervised(tmp_path, entry, SandboxLimits(timeout_s=30, memory_mb=256, address_space=False))
    assert outcome.memory_exceeded and outcome.signal_name == "SIGKILL"


def test_environment_is_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-secret")
    monkeypatch.setenv("TRITON_API_KEY", "triton-secret")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/tmp/triton-cache")

    def entry(job: Path) -> int:
        (job / "env.txt").write_text(repr(dict(os.environ)))
        return 0

    run_supervised(tmp_path, entry)
    seen = (tmp_path / "job" / "env.txt").read_text()
    assert "secret" not in seen
    assert "TRITON_CACHE_DIR" in seen
    cleaned = clean_environment({"PATH": "/bin", "AWS_SECRET_ACCESS_KEY": "x", "HOME": "/root", "EDITOR": "vi"})
    assert cleaned == {"PATH": "/bin"}
