"""The sandbox's parts: the filesystem view (against a fake root), the seccomp program, the fallbacks."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import sandbox_level

from kope.evaluate import confine, oskernel, seccomp, view
from kope.evaluate.confine import Settings, weakest
from kope.evaluate.sandbox import Outcome, SandboxLimits, read_outcome, supervise
from kope.protocol.sandbox import SandboxReport

LDCONFIG = """\
1234 libs found in cache `/etc/ld.so.cache'
\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1
\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1
\tlibnvidia-ml.so.1 (libc6,x86-64) => /opt/nvidia/driver/lib/libnvidia-ml.so.1
\tlibnvidia-ptxjitcompiler.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1
"""


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for directory in ("usr/bin", "usr/lib", "etc/ld.so.conf.d", "dev/dri", "dev/nvidia-caps", "usr/local/nvidia/lib64"):
        (root / directory).mkdir(parents=True)
    for name in ("bin", "lib"):
        (root / name).symlink_to(f"usr/{name}")
    for file in ("etc/ld.so.cache", "etc/passwd", "etc/shadow", "dev/null", "dev/urandom", "dev/nvidia0",
                 "dev/nvidia1", "dev/nvidiactl", "dev/nvidia-uvm", "dev/dri/renderD128", "dev/nvidia-caps/nvidia-cap1",
                 "dev/sda", "dev/tty0"):  # fmt: skip
        (root / file).touch()
    return root


def test_view_of_a_gpu_machine(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    found = view.system_view(str(root))
    assert found.symlinks == {"/bin": "usr/bin", "/lib": "usr/lib"}
    assert "/usr" in found.read_only and "/etc/ld.so.cache" in found.read_only and "/etc/passwd" in found.read_only
    assert "/etc/shadow" not in found.read_only
    assert found.gpu == [
        "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl",
        "/dev/nvidia-caps/nvidia-cap1", "/dev/dri/renderD128",
    ]  # fmt: skip
    assert set(found.devices) == {"/dev/null", "/dev/urandom", *found.gpu}
    assert "/dev/sda" not in found.devices and "/dev/tty0" not in found.devices


def test_view_of_a_machine_without_gpu(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    for directory in ("dri", "nvidia-caps"):
        for node in (root / "dev" / directory).iterdir():
            node.unlink()
    for node in (root / "dev").glob("nvidia*"):
        node.rmdir() if node.is_dir() else node.unlink()
    found = view.system_view(str(root))
    assert found.gpu == [] and found.devices == ["/dev/null", "/dev/urandom"]


def test_driver_libraries_from_ldconfig(tmp_path: Path) -> None:
    dirs = view.driver_library_dirs(LDCONFIG, str(fake_root(tmp_path)))
    assert dirs == ["/opt/nvidia/driver/lib", "/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64"]


def test_hidden_paths_and_what_contains_them_are_never_in_the_view(tmp_path: Path) -> None:
    home = str(Path.home())
    found = view.system_view(hidden=(home, "/work/project/.cache"), extra=(home, "/work/project", "/work/project/src"))
    assert home not in found.read_only and "/work/project" not in found.read_only
    assert "/work/project/src" in found.read_only
    live = confine.base_view((str(tmp_path),))
    assert not any(p == "/" or str(tmp_path).startswith(p.rstrip("/") + "/") for p in live.read_only)
    assert os.getcwd() not in live.read_only


def test_submounts_below_view_paths() -> None:
    mountinfo = "\n".join([
        "27 1 254:0 / / rw - ext4 /dev/vda rw",
        "30 27 0:27 / /usr/local rw - ext4 /dev/vdb rw",
        "31 30 0:28 / /usr/local/cuda rw - ext4 /dev/vdc rw",
        "32 27 0:29 / /sys/fs/cgroup rw - tmpfs tmpfs rw",
        "33 27 0:30 / /home/user rw - ext4 /dev/vdd rw",
    ])  # fmt: skip
    assert view.submounts(["/usr", "/sys"], mountinfo) == ["/usr/local", "/usr/local/cuda"]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_seccomp_program_is_well_formed(machine: str) -> None:
    for deny_network in (False, True):
        program = seccomp.build(machine, deny_network=deny_network)
        assert program[0] == (0x20, 0, 0, 4)  # load the architecture first
        assert program[-1][0] == 0x06 and program[-1][3] == 0x00050000 | errno.EPERM
        for index, (code, jt, jf, _) in enumerate(program):
            if code in (0x15, 0x35, 0x45):
                assert index + 1 + max(jt, jf) < len(program)
        denied = {k for code, jt, _, k in program if code == 0x15 and jt}
        numbers = seccomp._NUMBERS[machine]
        assert {numbers["ptrace"], numbers["process_vm_readv"], numbers["mount"], numbers["unshare"]} <= denied
        assert numbers["socket"] in denied, "socket() is always judged: by its family, or refused outright"
        at = next(i for i, (code, jt, _, k) in enumerate(program) if code == 0x15 and k == numbers["socket"])
        refused_outright = at + 1 + program[at][1] == len(program) - 1
        assert refused_outright == deny_network, "without a network namespace every family is refused"


def test_weakest_report_wins() -> None:
    strong = SandboxReport(level="namespaces", protections=["a", "b", "seccomp"])
    weak = SandboxReport(level="landlock", protections=["a", "seccomp"], missing=["namespaces: refused"])
    combined = weakest([strong, weak, strong])
    assert combined is not None and combined.level == "landlock" and combined.protections == ["a", "seccomp"]
    assert combined.missing == ["namespaces: refused"]
    assert weakest([]) is None


def supervised(tmp_path: Path, mode: str, entry: Callable[[Path], int], refuse_namespaces: bool) -> Outcome:
    """supervise() in a forked process, optionally on a 'kernel' that refuses user namespaces."""
    job = tmp_path / "job"
    job.mkdir()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked supervisor
        try:
            if refuse_namespaces:

                def refuse(flags: int) -> None:
                    raise OSError(errno.EPERM, "unshare: Operation not permitted")

                oskernel.unshare = refuse  # type: ignore[assignment]
            supervise(job, SandboxLimits(timeout_s=20, sandbox=Settings(mode=mode)), entry)  # type: ignore[arg-type]
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    outcome = read_outcome(job)
    assert outcome is not None
    return outcome


def touch(job: Path) -> int:
    (job / "ran").write_text("yes")
    return 0


def test_strict_refuses_to_run_without_namespaces(tmp_path: Path) -> None:
    outcome = supervised(tmp_path, "strict", touch, refuse_namespaces=True)
    assert outcome.sandbox_refused and not (tmp_path / "job" / "ran").exists()
    assert outcome.sandbox is not None and any("Operation not permitted" in m for m in outcome.sandbox.missing)


def test_auto_falls_back_to_landlock_and_says_so(tmp_path: Path) -> None:
    outcome = supervised(tmp_path, "auto", touch, refuse_namespaces=True)
    assert not outcome.sandbox_refused and (tmp_path / "job" / "ran").read_text() == "yes"
    assert outcome.sandbox is not None and outcome.sandbox.level == "landlock"
    assert "namespaces: unshare: Operation not permitted" in outcome.sandbox.missing


@pytest.mark.skipif(sandbox_level() != "namespaces", reason="this machine refuses user namespaces (kope doctor)")
def test_strict_runs_where_namespaces_work(tmp_path: Path) -> None:
    outcome = supervised(tmp_path, "strict", touch, refuse_namespaces=False)
    assert outcome.sandbox is not None and outcome.sandbox.level == "namespaces" and not outcome.sandbox_refused
    assert (tmp_path / "job" / "ran").read_text() == "yes"
