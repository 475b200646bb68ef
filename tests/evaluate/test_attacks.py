"""Attacks on the process boundary (tests/fixtures/hostile/sandbox): each works with the sandbox off
and has no effect with it on (`auto`, which is the namespace level on this machine) and under the
forced Landlock fallback. Every test runs the attack both ways, so it can fail."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import sandbox_level

from kope.errors import SandboxError
from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import EvalResult
from kope.protocol.sandbox import SandboxMode

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tests" / "fixtures" / "tasks" / "scale.py"
ATTACKS = ROOT / "tests" / "fixtures" / "hostile" / "sandbox"
GOOD = ROOT / "tests" / "fixtures" / "good" / "scale.py"
NEAR_MISS_TASK = ROOT / "src" / "kope" / "ops" / "relu" / "task.py"
NEAR_MISS = ROOT / "src" / "kope" / "corpora" / "fixtures" / "relu_grid_floor_div.py"
FAKE_KEY = "sk-kope-fake-4f1d2c9e7b"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or sandbox_level() != "namespaces",
    reason="needs a machine that allows unprivileged user namespaces (see `kope doctor`)",
)


@pytest.fixture(scope="module")
def evaluator() -> Iterator[Evaluator]:
    with Evaluator() as shared:
        yield shared


def run(evaluator: Evaluator, attack: str, mode: SandboxMode, **options: object) -> EvalResult:
    chosen = EvalOptions(trials=1, integrity=False, sandbox=mode, **options)  # type: ignore[arg-type]
    return evaluator.evaluate(TASK, ATTACKS / attack, options=chosen, which="visible")


def printed(result: EvalResult) -> str:
    return "\n".join(case.stdout for case in result.cases)


def test_protected_levels_are_reported(evaluator: Evaluator) -> None:
    on = run(evaluator, "write_outside.py", "auto")
    off = run(evaluator, "write_outside.py", "off")
    landlock = run(evaluator, "write_outside.py", "landlock")
    assert on.sandbox is not None and on.sandbox.level == "namespaces"
    assert {"private-root", "pid-namespace", "network-namespace", "seccomp"} <= set(on.sandbox.protections)
    assert off.sandbox is not None and off.sandbox.level == "process" and "seccomp" not in off.sandbox.protections
    assert landlock.sandbox is not None and landlock.sandbox.level == "landlock"
    assert "landlock-filesystem" in landlock.sandbox.protections


@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_reference_outputs_are_out_of_reach(evaluator: Evaluator, mode: SandboxMode) -> None:
    result = run(evaluator, "steal_reference.py", mode)
    if mode == "off":
        assert "stolen" in printed(result) and result.status == "pass"
    else:
        assert "stolen" not in printed(result) and result.status == "fail"


def test_cache_entries_are_private(evaluator: Evaluator) -> None:
    run(evaluator, "steal_reference.py", "auto")
    entries = [p for p in evaluator.cache.root.iterdir() if p.is_dir()]
    assert entries and all(p.stat().st_mode & 0o077 == 0 for p in [evaluator.cache.root, *entries])


def _cli(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kope", *args],
        capture_output=True, text=True, timeout=300, env=env or dict(os.environ), check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the user's that holds an API key in its environment, as the kope CLI does."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], env={**os.environ, "OPENAI_API_KEY": FAKE_KEY}
    )
    yield process
    process.kill()
    process.wait()


@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_other_processes_environment_is_invisible(
    evaluator: Evaluator, victim: subprocess.Popen[bytes], mode: SandboxMode
) -> None:
    result = run(evaluator, "proc_environ.py", mode)
    seen = printed(result)
    assert result.status == "pass"
    if mode == "off":
        assert FAKE_KEY in seen and str(victim.pid) in seen
    else:
        assert FAKE_KEY not in result.model_dump_json() and str(victim.pid) not in seen.split("loot:")[0]
    if mode == "auto":
        pids = seen.split("pids seen:")[1].splitlines()[0]
        assert set(json.loads(pids.strip().replace("'", '"'))) <= {"1", "2"}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_kope_source_cannot_be_tampered_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: SandboxMode
) -> None:
    """The attack appends to the kope that the worker imports: a copy on PYTHONPATH (never the real one)."""
    copy = tmp_path / "site"
    shutil.copytree(ROOT / "src" / "kope", copy / "kope", ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "kope" / "evaluate" / "compare.py"
    real = ROOT / "src" / "kope" / "evaluate" / "compare.py"
    before, real_before = target.read_bytes(), hashlib.sha256(real.read_bytes()).hexdigest()
    monkeypatch.setenv("PYTHONPATH", str(copy))
    with Evaluator() as tampered:
        attack = run(tampered, "tamper_source.py", mode)
    assert str(target) in printed(attack)
    later = _cli(["eval", str(NEAR_MISS_TASK), str(NEAR_MISS), "--json"], {**os.environ, "PYTHONPATH": str(copy)})
    assert hashlib.sha256(real.read_bytes()).hexdigest() == real_before
    if mode == "off":
        assert target.read_bytes() != before and json.loads(later.stdout)["status"] == "pass"
    else:
        assert target.read_bytes() == before and json.loads(later.stdout)["status"] == "fail"


@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_no_file_appears_outside_the_job(evaluator: Evaluator, mode: SandboxMode) -> None:
    name = "kope-escape-probe.txt"
    places = [Path.home(), Path("/tmp"), Path("/var/tmp"), evaluator.scratch]
    for place in places:
        (place / name).unlink(missing_ok=True)
    try:
        result = run(evaluator, "write_outside.py", mode)
        appeared = [str(place) for place in places if (place / name).exists()]
        assert result.status == "pass"
        if mode == "off":
            assert len(appeared) == len(places)
        else:
            assert appeared == []
    finally:
        for place in places:
            (place / name).unlink(missing_ok=True)


def test_a_full_disk_is_an_error_and_is_cleaned_up(evaluator: Evaluator) -> None:
    small = run(evaluator, "fill_disk_small.py", "off", disk_mb=64)
    assert small.status == "pass"
    limited = run(evaluator, "fill_disk_small.py", "auto", disk_mb=64)
    assert limited.status == "error" and limited.error is not None and limited.error.kind == "disk"
    huge = run(evaluator, "fill_disk.py", "auto", disk_mb=128)
    assert huge.error is not None and huge.error.kind == "disk", huge.error
    assert "disk limit" in huge.error.message
    assert not list(evaluator.scratch.glob("job-*"))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_signals_cannot_reach_kope(mode: SandboxMode) -> None:
    with Evaluator() as evaluator:
        if mode == "off":
            with pytest.raises(SandboxError):
                run(evaluator, "signal_parents.py", mode)
                run(evaluator, "signal_parents.py", mode)
            return
        attacked = run(evaluator, "signal_parents.py", mode)
        assert attacked.status == "error" and attacked.error is not None and attacked.error.kind == "crash"
        assert "killed" not in printed(attacked)
        after = evaluator.evaluate(TASK, GOOD, options=EvalOptions(trials=1, sandbox=mode))
        assert after.status == "pass"


@pytest.fixture
def listener() -> Iterator[list[bytes]]:
    received: list[bytes] = []
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    for port in range(47391, 47400):
        try:
            server.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    else:
        pytest.skip("no free port in 47391-47399")
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    received.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield received
    stop.set()
    thread.join(timeout=5)
    server.close()


@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_loopback_of_the_machine_is_unreachable(evaluator: Evaluator, listener: list[bytes], mode: SandboxMode) -> None:
    result = run(evaluator, "loopback.py", mode)
    assert result.status == "pass"
    if mode == "off":
        assert any(b"kope-net-probe" in data for data in listener)
    else:
        assert listener == [] and "connected" not in printed(result)


@pytest.mark.parametrize("mode", ["off", "auto", "landlock", "process"])
def test_ptrace_and_process_memory_are_refused(evaluator: Evaluator, mode: SandboxMode) -> None:
    result = run(evaluator, "ptrace_parent.py", mode)
    text = printed(result)
    assert result.status == "pass"
    if mode == "off":
        assert "ptrace: attached" in text and "process_vm_readv: read" in text
    else:
        assert result.sandbox is not None and "seccomp" in result.sandbox.protections
        assert result.sandbox.level == {"auto": "namespaces"}.get(mode, mode)
        assert "ptrace: Operation not permitted" in text
        assert "process_vm_readv: Operation not permitted" in text


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_links_and_fifos_left_in_the_job_directory_are_refused(evaluator: Evaluator, mode: SandboxMode) -> None:
    result = run(evaluator, "planted_files.py", mode)
    assert result.status == "error" and result.error is not None and result.error.kind == "exit"


def test_the_parent_never_follows_a_link_out_of_a_job(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    from kope import protocol
    from kope.evaluate import compare

    elsewhere = tmp_path / "secret.safetensors"
    save_file(
        {"t0": np.zeros(3)}, str(elsewhere), metadata={"structure": '{"type": "tensor", "key": "t0", "shape": [3]}'}
    )
    job = tmp_path / "job"
    job.mkdir()
    (job / "outputs_0.safetensors").symlink_to(elsewhere)
    (job / "outputs_1.safetensors").write_bytes(elsewhere.read_bytes())
    assert compare.read_packed(job / "outputs_1.safetensors")[1]["t0"].shape == (3,)
    with pytest.raises(ValueError, match="not a regular file"):
        compare.read_packed(job / "outputs_0.safetensors")
    os.mkfifo(job / protocol.RESULT_FILE)
    with pytest.raises(ValueError, match="not a regular file"):
        protocol.read_job_text(job / protocol.RESULT_FILE)


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_kope_own_answers_are_masked(evaluator: Evaluator, mode: SandboxMode) -> None:
    result = run(evaluator, "read_answers.py", mode)
    found = int(printed(result).split("answers:")[1].split()[0])
    assert (found >= 20) if mode == "off" else (found == 0)
