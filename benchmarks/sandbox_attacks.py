"""The attacks on the process boundary, each run with the sandbox off and on: what each one achieved.

Every candidate of tests/fixtures/hostile/sandbox/ runs on tests/fixtures/tasks/scale.py (visible
case, one trial, integrity gates off so that only the OS boundary is measured) under
`--sandbox off`, `auto` (the namespace level where the machine allows it) and the forced `landlock`
fallback. A cell shows the evaluation's status (or error kind) and what the attack reported or left
behind. The tamper attack targets a scratch copy of kope placed first on the import path.

Usage: .venv/bin/python benchmarks/sandbox_attacks.py [--modes off,auto,landlock]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.errors import SandboxError
from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import EvalResult

ROOT = Path(__file__).resolve().parents[1]
TASK = ROOT / "tests" / "fixtures" / "tasks" / "scale.py"
ATTACKS = ROOT / "tests" / "fixtures" / "hostile" / "sandbox"
FAKE_KEY = "sk-kope-bench-5e2a91"
ESCAPE = "kope-escape-probe.txt"


def _evaluate(attack: str, mode: str, **options: object) -> EvalResult | str:
    try:
        with Evaluator() as evaluator:
            chosen = EvalOptions(trials=1, integrity=False, sandbox=mode, **options)  # type: ignore[arg-type]
            return evaluator.evaluate(TASK, ATTACKS / attack, options=chosen, which="visible")
    except SandboxError as exc:
        return f"kope broken: {str(exc)[:60]}"


def _status(result: EvalResult) -> str:
    return result.error.kind if result.error is not None else result.status


def _said(result: EvalResult, *words: str) -> str:
    lines = "\n".join(c.stdout for c in result.cases).splitlines()
    return "; ".join(sorted({line[:48] for line in lines if line.startswith(words)}))[:90]


def steal(mode: str) -> str:
    result = _evaluate("steal_reference.py", mode)
    return result if isinstance(result, str) else f"{_status(result)}: {_said(result, 'stolen', 'found')}"


def environ(mode: str) -> str:
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                              env={**os.environ, "OPENAI_API_KEY": FAKE_KEY})  # fmt: skip
    try:
        result = _evaluate("proc_environ.py", mode)
    finally:
        victim.kill()
        victim.wait()
    if isinstance(result, str):
        return result
    leaked = FAKE_KEY in result.model_dump_json()
    return f"{_status(result)}: key {'LEAKED' if leaked else 'not seen'}; {_said(result, 'pids')}"


def tamper(mode: str) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "site"
        shutil.copytree(ROOT / "src" / "kope", copy / "kope", ignore=shutil.ignore_patterns("__pycache__"))
        target = copy / "kope" / "evaluate" / "compare.py"
        before = target.read_bytes()
        previous = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = str(copy)
        try:
            result = _evaluate("tamper_source.py", mode)
        finally:
            if previous is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = previous
        changed = target.read_bytes() != before
    return (
        result if isinstance(result, str) else f"{_status(result)}: kope source {'CHANGED' if changed else 'unchanged'}"
    )


def write_outside(mode: str) -> str:
    places = [Path.home(), Path("/tmp"), Path("/var/tmp")]
    for place in places:
        (place / ESCAPE).unlink(missing_ok=True)
    result = _evaluate("write_outside.py", mode)
    appeared = [str(p) for p in places if (p / ESCAPE).exists()]
    for place in places:
        (place / ESCAPE).unlink(missing_ok=True)
    if isinstance(result, str):
        return result
    return f"{_status(result)}: {len(appeared)} of {len(places)} files appeared outside"


def fill_disk(mode: str) -> str:
    attack = "fill_disk_small.py" if mode == "off" else "fill_disk.py"
    began = time.monotonic()
    result = _evaluate(attack, mode, disk_mb=128)
    seconds = time.monotonic() - began
    size = "256 MiB" if mode == "off" else "2 GiB"
    return result if isinstance(result, str) else f"{size}: {_status(result)} in {seconds:.1f} s"


def signals(mode: str) -> str:
    result = _evaluate("signal_parents.py", mode)
    return result if isinstance(result, str) else f"{_status(result)}: {_said(result, 'killed', 'could')}"


def loopback(mode: str) -> str:
    received: list[bytes] = []
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 47391))
    server.listen(4)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                received.append(conn.recv(64))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        result = _evaluate("loopback.py", mode)
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()
    if isinstance(result, str):
        return result
    return f"{_status(result)}: {'server REACHED' if received else 'server not reached'}"


def ptrace(mode: str) -> str:
    result = _evaluate("ptrace_parent.py", mode)
    return result if isinstance(result, str) else f"{_status(result)}: {_said(result, 'ptrace', 'process_vm')}"


ATTACK_TABLE: list[tuple[str, Callable[[str], str]]] = [
    ("reference outputs of this case, via a copy kernel", steal),
    ("other processes' /proc environ (a fake API key)", environ),
    ("append to kope's compare.py on the import path", tamper),
    ("files in home, /tmp, /var/tmp", write_outside),
    ("fill the job directory (limit 128 MB)", fill_disk),
    ("SIGKILL parent, fork server, process group", signals),
    ("TCP to a server on 127.0.0.1", loopback),
    ("ptrace / process_vm_readv of the parent", ptrace),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", default="off,auto,landlock")
    args = parser.parse_args()
    modes = args.modes.split(",")
    console = Console(width=200)
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, kernel {platform.release()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}"
    )
    table = Table(title="attacks on the process boundary", show_lines=True)
    table.add_column("attack")
    for mode in modes:
        table.add_column(f"--sandbox {mode}")
    for label, attack in ATTACK_TABLE:
        table.add_row(label, *[attack(mode) for mode in modes])
    console.print(table)


if __name__ == "__main__":
    main()
