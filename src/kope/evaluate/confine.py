"""The OS boundary around a job that runs task or candidate code, and the report of what held.

Three levels, strongest first:

- `namespaces`: new user, mount, PID, network, IPC and UTS namespaces. The supervisor unshares the
  user, PID, network, IPC and UTS namespaces before it forks the worker, which is PID 1 of the new
  PID namespace; the worker then builds its own mount namespace: a read-only root of bind mounts
  (`kope.evaluate.view`), the job directory writable, a size-limited private `/tmp` and `/dev/shm`,
  a minimal `/dev`, and `/proc` for its PID namespace only; `pivot_root` into it drops the rest.
- `landlock`: where user namespaces are refused. Landlock denies every path but the view (read),
  the job directory (read and write) and a few devices; TCP and, from ABI 6, signals and abstract
  sockets outside the sandbox; the network is also closed by seccomp.
- `process`: kope's process isolation only (own session, clean environment, limits).

On every level: `no_new_privs`, the seccomp filter of `kope.evaluate.seccomp` where the kernel has
seccomp, file-size, process-count (under namespaces) and open-file limits. Modes: `auto` takes the
strongest level this machine allows; `strict` refuses to run without `namespaces`; `off` is
`process` without seccomp (for comparison); `landlock` and `process` force that level.

The worker reports what it set up through a pipe that it closes before any task or candidate code
runs, so that code cannot forge the report.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import resource
import shutil
import socket
import struct
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kope.evaluate import landlock, oskernel, seccomp
from kope.evaluate.view import View, submounts, system_view
from kope.protocol.sandbox import SandboxMode, SandboxReport

REFUSED_EXIT = 78
_RANK = {"process": 0, "landlock": 1, "namespaces": 2}
_ROOT_DIR = ".sandbox-root"
_HOSTNAME = "kope-sandbox"


def weakest(reports: Sequence[SandboxReport]) -> SandboxReport | None:
    """The report of the least protected job, with every protection missing anywhere listed."""
    if not reports:
        return None
    low = min(reports, key=lambda r: _RANK[r.level])
    missing = sorted({m for r in reports for m in r.missing})
    held = [p for p in low.protections if all(p in r.protections for r in reports)]
    return low.model_copy(update={"missing": missing, "protections": held})


@dataclass(frozen=True)
class Settings:
    """How to confine a job (part of the job's limits)."""

    mode: SandboxMode = "auto"
    disk_mb: int = 4096
    """The largest file the job may write, and the most its directory may hold."""
    tmp_mb: int = 256
    """Size of the private /tmp and /dev/shm (namespaces level)."""
    max_processes: int = 256
    """Tasks (processes and threads) in the sandbox's user namespace (namespaces level)."""
    max_open_files: int = 4096
    hidden: tuple[str, ...] = ()
    """Paths that must not be visible even if they contain importable code (caches, scratch, home)."""


@dataclass
class Entered:
    """What the supervisor set up before forking the worker."""

    settings: Settings
    namespaces: bool = False
    missing: list[str] = field(default_factory=list)
    view: View | None = None
    init_pid: int | None = None
    """PID 1 of the new PID namespace: a `sleep` the supervisor spawned before forking the worker
    (PID 2). The kernel drops signals sent to it from inside the namespace; when the supervisor kills
    it at the end, every process left in the namespace dies with it."""


def enter(settings: Settings) -> Entered:
    """Supervisor side, in a single-threaded process, before forking the worker."""
    entered = Entered(settings)
    if settings.mode in ("off", "process", "landlock"):
        return entered
    uid, gid = os.getuid(), os.getgid()
    try:
        oskernel.unshare(
            oskernel.CLONE_NEWUSER | oskernel.CLONE_NEWPID | oskernel.CLONE_NEWNET
            | oskernel.CLONE_NEWIPC | oskernel.CLONE_NEWUTS
        )  # fmt: skip
        oskernel.write_id_maps(uid, gid)
        entered.namespaces = True
        entered.init_pid = _spawn_init()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno == 22 and len(os.listdir("/proc/self/task")) > 1:
            reason = "the supervisor has several threads (user namespaces need a single-threaded process)"
        entered.missing.append(f"namespaces: {reason}")
    return entered


def _spawn_init() -> int | None:
    """PID 1 for the new PID namespace, cheaply: posix_spawn (no copy of this large process) of `sleep`.

    The worker must not be PID 1 itself: PID 1 ignores the signals it sends itself (a candidate's
    `os.abort()`, `kill(0, ...)`), so a crash would not look like one.
    """
    sleep = shutil.which("sleep", path="/usr/bin:/bin")
    if sleep is None:
        return None
    try:
        return os.posix_spawn(sleep, [sleep, "2147483647"], {}, setsid=True)
    except OSError:
        return None


@functools.lru_cache(maxsize=8)
def base_view(hidden: tuple[str, ...]) -> View:
    home = os.path.expanduser("~")
    always = (os.getcwd(), tempfile.gettempdir(), home)
    return system_view(hidden=tuple(hidden) + always)


def confine(entered: Entered, job_dir: Path, report_fd: int | None) -> SandboxReport:
    """Worker side, before any task or candidate code: apply every protection, report, close the pipe.

    Under `strict`, a protection of the namespaces level that fails ends the process (exit code 78)
    after reporting why; nothing untrusted has run.
    """
    settings = entered.settings
    can_filter = seccomp.available() and seccomp.supported()
    report = SandboxReport(mode=settings.mode, missing=list(entered.missing))
    held = report.protections
    held += ["own-session", "clean-environment"]
    if settings.mode == "off":
        report.missing.append("the OS sandbox is off (--sandbox off)")
        _send(report, report_fd)
        return report
    private_root = False
    if entered.namespaces:
        held += ["user-namespace", "pid-namespace", "network-namespace", "ipc-namespace", "uts-namespace"]
        try:
            _private_root(job_dir, entered.view or base_view(settings.hidden), settings, held)
            private_root = True
        except OSError as exc:
            report.missing.append(f"private root: {exc.strerror or exc}")
        with contextlib.suppress(OSError):
            oskernel.sethostname(_HOSTNAME)
        with contextlib.suppress(OSError):
            _loopback_up()
    if settings.mode == "strict" and not private_root:
        _refuse(report, report_fd)
    if entered.namespaces and entered.init_pid is None:
        report.missing.append("init: no `sleep` to spawn, the worker is PID 1 (signals it sends itself are ignored)")
    _limits(settings, held, namespaces=entered.namespaces)
    try:
        oskernel.no_new_privs()
        held.append("no-new-privs")
    except OSError as exc:
        report.missing.append(f"no_new_privs: {exc.strerror or exc}")
    if entered.namespaces:
        try:
            oskernel.drop_capabilities(oskernel.last_capability())
            held.append("capabilities-dropped")
        except OSError as exc:
            report.missing.append(f"dropping capabilities: {exc.strerror or exc}")
            if settings.mode == "strict":
                _refuse(report, report_fd)
    use_landlock = not private_root and settings.mode in ("auto", "landlock")
    if use_landlock:
        _landlock(job_dir, entered.view or base_view(settings.hidden), report)
    report.level = "namespaces" if private_root else ("landlock" if "landlock-filesystem" in held else "process")
    if can_filter:
        try:
            seccomp.install(deny_network=not entered.namespaces)
            held.append("seccomp")
            if not entered.namespaces:
                held.append("seccomp-no-network-sockets")
        except OSError as exc:
            report.missing.append(f"seccomp: {exc.strerror or exc}")
    else:
        report.missing.append("seccomp: not offered by this kernel or architecture")
    _send(report, report_fd)
    return report


def _refuse(report: SandboxReport, report_fd: int | None) -> None:
    report.level = "process"
    _send(report, report_fd, refused=True)
    os._exit(REFUSED_EXIT)


def _send(report: SandboxReport, report_fd: int | None, *, refused: bool = False) -> None:
    if report_fd is None:
        return
    payload = json.dumps({"report": report.model_dump(), "refused": refused}).encode()
    with contextlib.suppress(OSError):
        os.write(report_fd, payload)
    with contextlib.suppress(OSError):
        os.close(report_fd)


def read_report(report_r: int) -> tuple[SandboxReport | None, bool]:
    """Supervisor side: the worker's report (None if it sent none) and whether it refused to run."""
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(report_r, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    try:
        data = json.loads(b"".join(chunks))
        return SandboxReport.model_validate(data["report"]), bool(data.get("refused"))
    except (ValueError, KeyError, TypeError):
        return None, False


def _limits(settings: Settings, held: list[str], *, namespaces: bool) -> None:
    def cap(which: int, value: int, name: str) -> None:
        _soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (value, value))
            held.append(name)

    cap(resource.RLIMIT_FSIZE, settings.disk_mb * 1024 * 1024, "file-size-limit")
    cap(resource.RLIMIT_NOFILE, settings.max_open_files, "open-files-limit")
    if namespaces:  # counted per user namespace: only the sandbox's own tasks; threads count, so scale with cores
        cap(resource.RLIMIT_NPROC, max(settings.max_processes, 4 * (os.cpu_count() or 1) + 64), "process-limit")


# -- the namespaces level: a private root -----------------------------------------------------


def _statvfs_flags(path: str) -> int:
    """The mount flags of `path` that a read-only remount must keep (locked in a user namespace)."""
    flags = os.statvfs(path).f_flag
    keep = 0
    for st, ms in (
        (os.ST_NOSUID, oskernel.MS_NOSUID),
        (os.ST_NODEV, oskernel.MS_NODEV),
        (os.ST_NOEXEC, oskernel.MS_NOEXEC),
    ):
        if flags & st:
            keep |= ms
    for st, ms in ((1024, oskernel.MS_NOATIME), (2048, oskernel.MS_NODIRATIME), (4096, oskernel.MS_RELATIME)):
        if flags & st:
            keep |= ms
    return keep


def _bind(
    source: str,
    target: str,
    *,
    writable: bool = False,
    device: bool = False,
    nested: Sequence[str] = (),
    recursive: bool = True,
) -> None:
    """Bind `source` (with what is mounted below it, if `recursive`) at `target`, read-only unless `writable`."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            with open(target, "a"):
                pass
    oskernel.mount(source, target, None, oskernel.MS_BIND | (oskernel.MS_REC if recursive else 0))
    for point in (source, *nested):
        flags = oskernel.MS_BIND | oskernel.MS_REMOUNT | oskernel.MS_NOSUID | _statvfs_flags(point)
        if not device:
            flags |= oskernel.MS_NODEV
        if not writable:
            flags |= oskernel.MS_RDONLY
        oskernel.mount(None, target + point[len(source) :], None, flags)


def _private_root(job_dir: Path, view: View, settings: Settings, held: list[str]) -> None:
    oskernel.unshare(oskernel.CLONE_NEWNS)
    oskernel.mount(None, "/", None, oskernel.MS_REC | oskernel.MS_PRIVATE)
    root = str(job_dir / _ROOT_DIR)
    os.makedirs(root, exist_ok=True)
    oskernel.mount("tmpfs", root, "tmpfs", oskernel.MS_NOSUID | oskernel.MS_NODEV, "size=8m,mode=0755")
    inside = lambda path: root + path  # noqa: E731
    tmp_options = f"size={settings.tmp_mb}m,mode=1777"
    os.makedirs(inside("/tmp"), exist_ok=True)  # first: view paths below /tmp are bound on top of it
    oskernel.mount("tmpfs", inside("/tmp"), "tmpfs", oskernel.MS_NOSUID | oskernel.MS_NODEV, tmp_options)
    with open("/proc/self/mountinfo") as handle:
        mountinfo = handle.read()
    for path in view.read_only:
        if os.path.exists(path):
            _bind(path, inside(path), nested=submounts([path], mountinfo))
    for link, target in view.symlinks.items():
        os.symlink(target, inside(link))
    for path in view.masked:
        oskernel.mount(
            "tmpfs", inside(path), "tmpfs", oskernel.MS_RDONLY | oskernel.MS_NOSUID | oskernel.MS_NODEV, "size=4k"
        )
    # Not recursive: below the job directory is the new root itself (its mount point), which must not
    # reappear, writable, inside the view.
    _bind(str(job_dir), inside(str(job_dir)), writable=True, recursive=False)
    os.makedirs(inside("/dev"), exist_ok=True)
    oskernel.mount("tmpfs", inside("/dev"), "tmpfs", oskernel.MS_NOSUID, "size=64k,mode=0755")
    for device in view.devices:
        _bind(device, inside(device), writable=True, device=True)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, inside(f"/dev/{name}"))
    os.makedirs(inside("/dev/shm"), exist_ok=True)
    oskernel.mount("tmpfs", inside("/dev/shm"), "tmpfs", oskernel.MS_NOSUID | oskernel.MS_NODEV, tmp_options)
    os.makedirs(inside("/proc"), exist_ok=True)
    # Read-only: no write to /proc/self/mem (a store into tensor memory that no hook sees), nor to any other
    # file of the job's own processes; reading stays possible, as Python and PyTorch need.
    oskernel.mount(
        "proc",
        inside("/proc"),
        "proc",
        oskernel.MS_RDONLY | oskernel.MS_NOSUID | oskernel.MS_NODEV | oskernel.MS_NOEXEC,
    )
    os.makedirs(inside("/sys"), exist_ok=True)
    with contextlib.suppress(OSError):  # a fresh sysfs of this network namespace: no cgroup mounts in it
        oskernel.mount(
            "sysfs",
            inside("/sys"),
            "sysfs",
            oskernel.MS_RDONLY | oskernel.MS_NOSUID | oskernel.MS_NODEV | oskernel.MS_NOEXEC,
        )
    for path in ("/etc", "/var", "/run", "/home", "/root", "/opt", "/mnt", "/media", "/srv"):
        os.makedirs(inside(path), exist_ok=True)
    os.chdir(root)
    oskernel.pivot_root(".", ".")
    oskernel.umount(".", oskernel.MNT_DETACH)
    os.chdir("/")
    oskernel.mount(
        None,
        "/",
        None,
        oskernel.MS_REMOUNT | oskernel.MS_BIND | oskernel.MS_RDONLY | oskernel.MS_NOSUID | oskernel.MS_NODEV,
    )
    held += ["mount-namespace", "private-root", "read-only-view", "private-tmp", "private-proc", "read-only-proc"]
    if view.masked:
        held.append("kope-answers-masked")
    if view.gpu:
        held.append("gpu-devices:" + ",".join(os.path.basename(d) for d in view.gpu))


def _loopback_up() -> None:
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock.fileno(), siocgifflags, request))[1]
        fcntl.ioctl(sock.fileno(), siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))


# -- the landlock level -----------------------------------------------------------------------


def _landlock(job_dir: Path, view: View, report: SandboxReport) -> None:
    abi = landlock.abi_version()
    if abi <= 0:
        report.missing.append("landlock: not offered by this kernel")
        return
    ruleset = landlock.Ruleset(
        read_only=[*view.read_only, *view.symlinks, "/proc/self", "/sys/devices/system/cpu"],
        read_write=[str(job_dir)],
        devices=list(view.devices),
    )
    try:
        ruleset.restrict_self(abi)
    except OSError as exc:
        report.missing.append(f"landlock: {exc.strerror or exc}")
        return
    report.protections += [*ruleset.protections(abi), f"landlock-abi-{abi}"]
