"""A memory cgroup per job, where this machine lets kope make one: the kernel's own count of every page a job holds.

The supervisor's poll (`kope.evaluate.sandbox`) reads the job's processes and the memory-only files they hold
twice a poll interval; what is allocated and let go between two polls, or held where no process table shows it
(kernel buffers, pipes, page tables), it cannot see. A cgroup's limit is enforced by the kernel on every page
charged to it, anonymous memory, tmpfs, `/dev/shm` and memfd pages alike, at the moment of the allocation.

- cgroup v2: a child of this process's own cgroup, when that cgroup is delegated to this user and has the memory
  controller in its `cgroup.subtree_control` (`memory.max`, `memory.swap.max`, `memory.events`, `memory.peak`).
- cgroup v1: a child of this process's cgroup in the memory hierarchy, when it is writable (root, or a
  delegated one: `memory.limit_in_bytes`, `memory.memsw.limit_in_bytes`, `memory.failcnt`).
- neither: `JobGroup.create` gives None and the poll alone limits memory (`kope doctor` says which).

The supervisor creates the group before it forks the worker and moves the worker into it while the worker confines
itself; the worker waits for the move before it runs any task or candidate code (its children inherit the group),
and the supervisor removes the group after the job. The group's limit is the
job's limit plus a margin (`MARGIN`): the poll, which explains what it kills, normally acts first; the kernel
stops what the poll cannot see.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

MARGIN = 1.1
"""The group's limit over the job's: the poll gets the first word, the kernel the last."""

_PROC_CGROUP = Path("/proc/self/cgroup")
_MOUNTINFO = Path("/proc/self/mountinfo")


@dataclass(frozen=True)
class _Hierarchy:
    version: int
    parent: Path
    """This process's own cgroup, in which job groups are made."""


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, filesystem type, super options) of each cgroup mount."""
    found: list[tuple[str, str, set[str]]] = []
    with contextlib.suppress(OSError):
        for line in _MOUNTINFO.read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per hierarchy: `""` for v2's, the controller list for each v1 one."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in _PROC_CGROUP.read_text().splitlines():
            parts = line.split(":", 2)
            if len(parts) == 3:
                paths[parts[1]] = parts[2]
    return paths


def _writable(path: Path, *files: str) -> bool:
    return path.is_dir() and os.access(path, os.W_OK) and all(os.access(path / f, os.W_OK) for f in files)


def hierarchy() -> _Hierarchy | None:
    """Where this process may make a memory cgroup: v2 when delegated with the memory controller, else v1."""
    own, mounts = _own_paths(), _mounts()
    for point, kind, _ in mounts:
        if kind == "cgroup2" and "" in own:
            parent = Path(point) / own[""].lstrip("/")
            controls = parent / "cgroup.subtree_control"
            with contextlib.suppress(OSError):
                if "memory" in controls.read_text().split() and _writable(parent, "cgroup.procs"):
                    return _Hierarchy(2, parent)
    for point, kind, options in mounts:
        if kind == "cgroup" and "memory" in options:
            path = next((p for names, p in own.items() if "memory" in names.split(",")), None)
            if path is not None:
                parent = Path(point) / path.lstrip("/")
                if _writable(parent) and (parent / "memory.limit_in_bytes").exists():
                    return _Hierarchy(1, parent)
    return None


@dataclass
class JobGroup:
    """One job's memory cgroup (see the module docstring)."""

    path: Path
    version: int
    limit_bytes: int

    @classmethod
    def create(cls, memory_mb: int) -> JobGroup | None:
        """A new group limited to `memory_mb` (times `MARGIN`); None where this machine allows none."""
        found = hierarchy()
        if found is None:
            return None
        path = found.parent / f"kope-job-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        limit = int(memory_mb * MARGIN) * 1024 * 1024
        try:
            path.mkdir()
        except OSError:
            return None
        group = cls(path, found.version, limit)
        try:
            if found.version == 2:
                (path / "memory.max").write_text(str(limit))
                with contextlib.suppress(OSError):  # no swap accounting: nothing to close
                    (path / "memory.swap.max").write_text("0")
            else:
                (path / "memory.limit_in_bytes").write_text(str(limit))
                with contextlib.suppress(OSError):
                    (path / "memory.memsw.limit_in_bytes").write_text(str(limit))
        except OSError:
            group.close()
            return None
        return group

    def join(self, pid: int = 0) -> None:
        """Move process `pid` (0: the calling one) into the group. The supervisor moves the worker while the worker
        sets up its confinement, and the worker waits for it before any task or candidate code runs: on cgroup v1 a
        move can wait for an RCU grace period (about 10 ms here), which the two then spend side by side."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def peak_mb(self) -> float:
        """The most memory the group held (0 when no process ever joined it)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        with contextlib.suppress(OSError, ValueError):
            return int((self.path / name).read_text()) / 1024 / 1024
        return 0.0

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group at its limit (v1 kernels that do not count kills:
        whether usage ever reached the limit)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            fields = dict(line.split()[:2] for line in (self.path / name).read_text().splitlines() if line.strip())
            if "oom_kill" in fields:
                return int(fields["oom_kill"]) > 0
            return int((self.path / "memory.failcnt").read_text()) > 0
        return False

    def close(self) -> None:
        """Remove the group (its processes are gone: the supervisor killed them before)."""
        with contextlib.suppress(OSError):
            self.path.rmdir()
