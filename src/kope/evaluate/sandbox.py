"""Run one job in a sandboxed child process and say how it ended.

A *supervisor* (kope's code only) sets up the OS boundary (`kope.evaluate.confine`: namespaces, or
Landlock, plus seccomp and limits), forks the *worker* that runs untrusted code, then watches it:

- the worker gets its own session and process group, a clean environment (an allowlist: no keys,
  tokens or other secrets), an empty working directory, stdin from /dev/null, no core dumps and,
  where asked, an address-space limit;
- its stdout and stderr go to pipes that the supervisor drains, keeping the head and the tail of
  each (a flood of output cannot exhaust memory or block the worker);
- the supervisor enforces the wall-time limit and polls the memory (RSS) of the whole process tree;
- it is a child subreaper: processes the worker started, even those that left its session, become
  the supervisor's children when their parents die, and every one of them is killed at the end.
  No orphan survives a job;
- it polls the size of the job directory: past `disk_mb` the job is killed (error kind `disk`).

The supervisor writes `outcome.json` (an `Outcome`) into the job directory. What the worker itself
produced (results, tensors) is read and validated by the caller. A candidate job's results come through
the sealed channel (`kope.protocol.channel`): the supervisor keeps what the worker sent and,
once every process of the job is dead, writes the accepted files into a fresh `sealed/` directory, so
the caller never reads a file that the candidate's process could still write.

Memory counts what the job holds, not only what it maps: the resident memory of its processes plus
the files only memory backs (memfd, `/dev/shm`, the private `/tmp`), held open or left in those
filesystems. The disk poll counts every byte under the job directory.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pydantic import BaseModel

from kope import protocol
from kope.evaluate import confine
from kope.evaluate.cgroup import JobGroup
from kope.evaluate.confine import Settings
from kope.protocol import channel
from kope.protocol.sandbox import SandboxReport

OUTCOME_FILE = "outcome.json"
WORK_DIR = "work"
JOINED_FD = channel.FEED_FD + 1
"""The worker's end of the pipe on which the supervisor says the worker is in the job's memory cgroup (closed before
task or candidate code runs)."""

_PR_SET_CHILD_SUBREAPER = 36
_POLL_S = 0.05

ENV_ALLOW = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
    "NVIDIA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VIRTUAL_ENV",
)
"""Environment variables a sandboxed process may see; `TRITON_*` ones pass too, unless secret-like."""

_SECRET_RE = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


def clean_environment(environ: Mapping[str, str] | None = None, extra_allow: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a sandboxed process gets: allowlisted names that do not look secret."""
    environ = os.environ if environ is None else environ
    allowed = set(ENV_ALLOW) | set(extra_allow)
    return {
        name: value
        for name, value in environ.items()
        if (name in allowed or name.startswith("TRITON_")) and not _SECRET_RE.search(name)
    }


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one job."""

    timeout_s: float = 60.0
    memory_mb: int | None = 4096
    """RSS limit of the whole process tree; None for none."""
    address_space: bool = True
    """Also cap the worker's virtual address space (off on CUDA, whose driver reserves a lot)."""
    output_bytes: int = 32 * 1024
    """How much of stdout and of stderr is kept: half from the head, half from the tail."""
    extra_env: Mapping[str, str] = field(default_factory=dict)
    sandbox: Settings = field(default_factory=Settings)


class Outcome(BaseModel):
    """How a worker process ended, as the supervisor saw it."""

    exit_code: int | None = None
    signal: int | None = None
    signal_name: str | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    leftover_processes: int = 0
    """Processes still alive (or started) after the worker ended, all killed by the supervisor."""
    disk_exceeded: bool = False
    sandbox: SandboxReport | None = None
    """What protected the job, as the worker reported before running any task or candidate code."""
    sandbox_refused: bool = False
    """`--sandbox strict` and the OS boundary could not be set up: nothing ran."""
    sealed: bool = False
    """The worker's sealed results arrived intact and are in `sealed/` (the worker then killed itself)."""
    channel_error: str | None = None
    """The worker sent something on the sealed channel that is not one intact message: why it was refused."""


class _Capture:
    """Keeps the first and last `limit // 2` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        kept = len(self.head) + len(self.tail)
        middle = b""
        if self.total > kept:
            middle = f"\n[... {self.total - kept} bytes omitted ...]\n".encode()
        return (bytes(self.head) + middle + bytes(self.tail)).decode(errors="replace")


def supervise(job_dir: Path, limits: SandboxLimits, entry: Callable[[Path], int]) -> Outcome:
    """Fork a worker that runs `entry(job_dir)`, watch it, clean up, write and return the outcome.

    Call it in a process of its own (the fork server forks one per job): it makes the calling
    process a subreaper and kills every one of its descendants at the end.
    """
    become_subreaper()
    work = job_dir / WORK_DIR
    work.mkdir(exist_ok=True)
    if limits.sandbox.mode == "landlock" or limits.sandbox.mode == "auto":
        (work / "tmp").mkdir(exist_ok=True)
    view = confine.base_view(limits.sandbox.hidden) if limits.sandbox.mode != "off" else None
    entered = confine.enter(limits.sandbox)
    entered.view = view
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    report_r, report_w = os.pipe()
    chan_r, chan_w = os.pipe()
    key_r, key_w = os.pipe()
    key = os.urandom(channel.KEY_BYTES)
    os.write(key_w, key)
    os.close(key_w)
    feed = _Feed(job_dir)
    group = JobGroup.create(limits.memory_mb) if limits.memory_mb and limits.sandbox.mode != "off" else None
    joined_r, joined_w = os.pipe()
    started = time.monotonic()
    disk_base = _disk_usage(job_dir)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the worker, reported through its results
        os.close(report_r)
        os.close(chan_r)
        os.close(joined_w)
        fds = (out_w, err_w, report_w, chan_w, key_r, feed.worker_end, joined_r)
        _exec_worker(job_dir, limits, entry, fds, entered)
    for fd in (out_w, err_w, report_w, chan_w, key_r, joined_r):
        os.close(fd)
    _move_into(group, pid, joined_w)
    feed.started()
    try:
        with tempfile.TemporaryFile() as stream:  # unnamed (O_TMPFILE): no process of the job can open it
            sink = _Sink(chan_r, stream, limits.sandbox.disk_mb * 1024 * 1024)
            outcome = _watch(pid, out_r, err_r, limits, started, job_dir, disk_base, entered.init_pid, sink, feed)
            outcome.sandbox, outcome.sandbox_refused = confine.read_report(report_r)
            os.close(report_r)
            if group is not None:
                _group_outcome(outcome, group)
            feed.close()
            sink.finish()
            os.close(chan_r)
            _unseal(outcome, sink, key, job_dir)
    finally:
        if group is not None:
            group.close()
    shutil.rmtree(job_dir / ".sandbox-root", ignore_errors=True)
    _write_json(job_dir / OUTCOME_FILE, outcome.model_dump())
    return outcome


def _move_into(group: JobGroup | None, pid: int, joined_w: int) -> None:
    """Move the worker into the job's group while it confines itself, then let it go on (`JOINED_FD`)."""
    if group is not None:
        with contextlib.suppress(OSError):  # a worker already gone; or no right to move it: no protection claimed
            group.join(pid)
    with contextlib.suppress(OSError):
        os.write(joined_w, b"1")
    os.close(joined_w)


def _group_outcome(outcome: Outcome, group: JobGroup) -> None:
    """What the job's memory cgroup saw: a kill at its limit is the memory limit's (whatever the poll missed), and a
    group the worker joined is a protection that held where the job cannot leave it: under namespaces (no cgroup
    mount in its view) or Landlock (cgroup files are not writable); at the `process` level a process with the
    rights to write the parent group's `cgroup.procs` moves itself out, so the group limits it only while it stays."""
    boundary = outcome.sandbox is not None and outcome.sandbox.level in ("namespaces", "landlock")
    if group.peak_mb() > 0 and outcome.sandbox is not None and boundary:
        outcome.sandbox.protections.append("cgroup-memory")
    if outcome.signal == signal.SIGKILL and not outcome.timed_out and group.oom_killed():
        outcome.memory_exceeded = True


class _Feed:
    """Hands a candidate job its trial inputs, each file once, when its worker asks (`channel.FEED_DIR`).

    The files are opened and their folder removed before the worker exists, so the candidate's process
    can reach an input only through this socket, and a file it took early is missing when kope's code
    asks for it."""

    def __init__(self, job_dir: Path) -> None:
        self.files: dict[str, int] = {}
        folder = job_dir / channel.FEED_DIR
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for entry in os.scandir(folder):
                if entry.is_file(follow_symlinks=False):
                    self.files[entry.name] = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
        channel.remove(folder)
        self.sock, worker = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.worker_end = worker.detach()
        self.open = True

    def started(self) -> None:
        """The worker has its end: close ours of it."""
        os.close(self.worker_end)
        self.sock.setblocking(False)

    def serve(self) -> None:
        try:
            request = self.sock.recv(512)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            request = b""
        if not request:
            self.open = False
            return
        fd = self.files.pop(request.decode(errors="replace"), None)
        with contextlib.suppress(OSError):
            if fd is None:
                self.sock.send(b"no")
            else:
                socket.send_fds(self.sock, [b"ok"], [fd])
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        for fd in self.files.values():
            os.close(fd)
        self.files.clear()
        self.sock.close()
        self.open = False


class _Sink:
    """What the worker writes on the sealed channel, kept in the supervisor's own unnamed file, up to `cap` bytes."""

    def __init__(self, fd: int, stream: IO[bytes], cap: int) -> None:
        self.fd = fd
        self.stream = stream
        self.cap = cap
        self.size = 0
        self.overflow = False
        self.open = True

    def drain(self) -> None:
        """Read what is there now (the descriptor is ready); past the cap, count but keep nothing."""
        data = os.read(self.fd, 1 << 20)
        if not data:
            self.open = False
            return
        self.size += len(data)
        if self.size > self.cap:
            self.overflow = True
        else:
            self.stream.write(data)

    def finish(self) -> None:
        """Every process of the job is dead: read what is left, up to the end of the pipe."""
        while self.open:
            ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return
            self.drain()


def _unseal(outcome: Outcome, sink: _Sink, key: bytes, job_dir: Path) -> None:
    channel.remove(job_dir / channel.SEALED_DIR)
    if sink.size == 0:
        return
    if sink.overflow:  # results larger than the job may write: the disk limit, as for files
        outcome.disk_exceeded = True
        return
    sink.stream.flush()
    try:
        found = channel.parse(sink.stream, sink.size, key)
        channel.write_sealed(sink.stream, found, job_dir, protocol.RESULT_FILE)
    except channel.Incomplete:
        return
    except channel.ChannelError as exc:
        outcome.channel_error = str(exc)
        return
    except OSError as exc:
        outcome.channel_error = f"the sealed results could not be written: {exc}"
        channel.remove(job_dir / channel.SEALED_DIR)
        return
    outcome.sealed = True
    killed_by_itself = outcome.signal == signal.SIGKILL and not (
        outcome.timed_out or outcome.memory_exceeded or outcome.disk_exceeded
    )
    if killed_by_itself:  # the worker ends itself so: the expected end of a sealed job
        outcome.signal = outcome.signal_name = None
        outcome.exit_code = 0


def _exec_worker(
    job_dir: Path,
    limits: SandboxLimits,
    entry: Callable[[Path], int],
    fds: tuple[int, int, int, int, int, int, int],
    entered: confine.Entered,
) -> None:
    """The worker: `fds` are its stdout, its stderr, the sandbox's report pipe, the sealed channel, its key, the
    input feed and the pipe on which the supervisor says it has moved the worker into the job's memory cgroup."""
    code = 70
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        # moved above every target number first, so that no dup2 below overwrites a descriptor still to be moved
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in (devnull, *fds)]
        targets = (0, 1, 2, 3, channel.CHANNEL_FD, channel.KEY_FD, channel.FEED_FD, JOINED_FD)
        for target, fd in zip(targets, high, strict=True):
            os.dup2(fd, target)
        os.closerange(JOINED_FD + 1, _max_fd())
        report = confine.confine(entered, job_dir, 3)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - lives as long as the process
        sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.address_space and limits.memory_mb:
            cap = _address_space_now() + limits.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        environ = clean_environment(os.environ)
        environ.update(limits.extra_env)
        environ["HOME"] = str(job_dir / WORK_DIR)
        if report.level == "namespaces":
            environ["TMPDIR"] = "/tmp"
        elif report.level == "landlock":
            environ["TMPDIR"] = str(job_dir / WORK_DIR / "tmp")
        environ[channel.ENV] = "1"
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(job_dir / WORK_DIR)
        if os.read(JOINED_FD, 1) != b"1":  # no word from the supervisor (gone): run nothing outside its watch
            os._exit(70)
        os.close(JOINED_FD)  # in the job's cgroup (where there is one) before any task or candidate code
        code = entry(job_dir)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 71
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _watch(  # noqa: C901 - the supervisor's one select loop: pipes, limits and the child's exit are handled where they interleave
    pid: int,
    out_r: int,
    err_r: int,
    limits: SandboxLimits,
    started: float,
    job_dir: Path,
    disk_base: int,
    init_pid: int | None = None,
    sink: _Sink | None = None,
    feed: _Feed | None = None,
) -> Outcome:
    captures = {out_r: _Capture(limits.output_bytes), err_r: _Capture(limits.output_bytes)}
    sealed_bytes = (lambda: sink.size) if sink is not None else (lambda: 0)
    open_fds = {out_r, err_r}
    outcome = Outcome()
    deadline = started + limits.timeout_s
    pidfd = _pidfd(pid)
    status: int | None = None
    next_memory_check = 0.0
    next_disk_check = 0.0
    disk_limit = disk_base + limits.sandbox.disk_mb * 1024 * 1024
    while status is None:
        now = time.monotonic()
        wait = max(0.0, min(deadline - now, _POLL_S))
        watched = list(open_fds) + ([pidfd] if pidfd is not None else [])
        if sink is not None and sink.open:
            watched.append(sink.fd)
        if feed is not None and feed.open:
            watched.append(feed.sock.fileno())
        ready, _, _ = select.select(watched, [], [], wait)
        for fd in ready:
            if fd in open_fds:
                _drain_once(fd, captures[fd], open_fds)
            elif sink is not None and fd == sink.fd:
                sink.drain()
            elif feed is not None and feed.open and fd == feed.sock.fileno():
                feed.serve()
        waited_pid, wait_status = os.waitpid(pid, os.WNOHANG)
        if waited_pid == pid:
            status = wait_status
            break
        now = time.monotonic()
        if now >= deadline:
            outcome.timed_out = True
            _kill_group(pid)
        elif limits.memory_mb and now >= next_memory_check:
            next_memory_check = now + _POLL_S * 2
            rss = _tree_memory_mb(os.getpid(), job_dir)
            outcome.peak_rss_mb = max(outcome.peak_rss_mb, rss)
            if rss > limits.memory_mb:
                outcome.memory_exceeded = True
                _kill_group(pid)
        if now >= next_disk_check and limits.sandbox.mode != "off":
            next_disk_check = now + _POLL_S * 4
            if _disk_usage(job_dir) + sealed_bytes() > disk_limit:
                outcome.disk_exceeded = True
                _kill_group(pid)
    outcome.seconds = round(time.monotonic() - started, 4)
    if limits.sandbox.mode != "off" and _disk_usage(job_dir) > disk_limit:  # written between two polls
        outcome.disk_exceeded = True
    if os.WIFSIGNALED(status):
        outcome.signal = os.WTERMSIG(status)
        outcome.signal_name = signal.Signals(outcome.signal).name
    else:
        outcome.exit_code = os.waitstatus_to_exitcode(status)
    _kill_group(pid)
    if init_pid is not None:  # the PID namespace's init: when it dies, the kernel ends the namespace
        with contextlib.suppress(OSError):
            os.kill(init_pid, signal.SIGKILL)
            os.waitpid(init_pid, 0)
    outcome.leftover_processes = kill_descendants()
    drain_deadline = time.monotonic() + 2.0
    while open_fds and time.monotonic() < drain_deadline:
        ready, _, _ = select.select(list(open_fds), [], [], 0.1)
        for fd in ready:
            _drain_once(fd, captures[fd], open_fds)
    for fd in (out_r, err_r):
        os.close(fd)
    if pidfd is not None:
        os.close(pidfd)
    outcome.stdout, outcome.stdout_bytes = captures[out_r].text(), captures[out_r].total
    outcome.stderr, outcome.stderr_bytes = captures[err_r].text(), captures[err_r].total
    return outcome


def _drain_once(fd: int, capture: _Capture, open_fds: set[int]) -> None:
    data = os.read(fd, 1 << 16)
    if data:
        capture.feed(data)
    else:
        open_fds.discard(fd)


def _disk_usage(job_dir: Path, max_entries: int = 20000) -> int:
    """Bytes under the job directory (allocated blocks); past `max_entries` files, as good as full."""
    total = 0
    entries = 0
    stack = [str(job_dir)]
    while stack:
        try:
            iterator = os.scandir(stack.pop())
        except OSError:
            continue
        with iterator:
            for entry in iterator:
                entries += 1
                if entries > max_entries:
                    return 1 << 62
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        info = entry.stat(follow_symlinks=False)
                        total += max(info.st_blocks * 512, 0)
                except OSError:
                    continue
    return total


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_descendants(rounds: int = 50) -> int:
    """Kill every process below this one, reap them, and return how many there were."""
    me = os.getpid()
    killed: set[int] = set()
    for _ in range(rounds):
        found = _descendants(me)
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(found)
        reaped = _reap_children()
        if not found and not reaped:
            break
        time.sleep(0.01)
    return len(killed)


def _reap_children() -> int:
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped += 1


def _process_table() -> dict[int, int]:
    """pid -> parent pid, from /proc."""
    table: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        table[int(entry.name)] = int(fields[1])
    return table


def _descendants(root: int) -> list[int]:
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found: list[int] = []
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


_MEMORY_BACKED = ("/memfd:", "/dev/shm/", "/tmp/", "/SYSV")
"""Targets of open descriptors whose data only memory holds (memfd, POSIX and System V shared memory, tmpfs)."""


def _tree_memory_mb(root: int, job_dir: Path | None = None) -> float:
    """The memory the processes below `root` hold: resident pages, plus memory-backed files they keep open
    and, for a job in its own mount namespace, what its private `/tmp` and `/dev/shm` hold."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    seen: set[tuple[int, int]] = set()
    own_mounts = _namespace("self", "mnt")
    private_root: int | None = None
    for pid in _descendants(root):
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue
        total += _memory_files(pid, seen)
        if private_root is None and own_mounts is not None and _namespace(str(pid), "mnt") not in (None, own_mounts):
            private_root = pid
    if private_root is not None:
        for where in ("tmp", "dev/shm"):
            with contextlib.suppress(OSError):
                path = f"/proc/{private_root}/root/{where}"
                if os.stat(path).st_dev == os.stat(f"/{where}").st_dev:
                    continue  # not yet its private tmpfs (the worker is still building its root)
                usage = os.statvfs(path)
                total += (usage.f_blocks - usage.f_bfree) * usage.f_frsize
    return total / (1024 * 1024)


def _namespace(pid: str, kind: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return None


def _memory_files(pid: int, seen: set[tuple[int, int]]) -> int:
    """Bytes of the memory-backed files `pid` holds open (each file once; tmpfs files of a private root are
    counted with their filesystem instead)."""
    total = 0
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        try:
            target = os.readlink(f"{folder}/{name}")
        except OSError:
            continue
        if not target.startswith(_MEMORY_BACKED):
            continue
        if target.startswith(("/tmp/", "/dev/shm/")) and not target.endswith(" (deleted)"):
            continue  # a named file: its filesystem's usage counts it (or, outside a private root, the disk poll)
        try:
            info = os.stat(f"{folder}/{name}")
        except OSError:
            continue
        key = (info.st_dev, info.st_ino)
        if key not in seen:
            seen.add(key)
            total += info.st_blocks * 512
    return total


def _address_space_now() -> int:
    with open("/proc/self/statm", "rb") as handle:
        return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def become_subreaper() -> None:
    """Adopt the orphans of this process's descendants (Linux), so that `kill_descendants` finds them;
    public because the fork server, which forks the supervisors, needs the same."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _max_fd() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 65536


def _write_json(path: Path, data: object) -> None:
    """Write through a new file of a fresh name (O_EXCL: never through a link the job left there),
    then rename it over `path` (which replaces a link, not its target)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".outcome-")
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps(data))
    os.replace(tmp, path)


def read_outcome(job_dir: Path) -> Outcome | None:
    try:
        return Outcome.model_validate_json(protocol.read_job_text(job_dir / OUTCOME_FILE))
    except (OSError, ValueError):
        return None
