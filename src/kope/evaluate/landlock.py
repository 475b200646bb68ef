"""Landlock: the sandbox's fallback where user namespaces are refused (unprivileged, per process).

A ruleset removes rights; it cannot hide paths. So everything is denied except: reading (and
executing) the read-only view, reading and writing the job directory, and the few device files a
process needs. From ABI 4 TCP bind and connect are denied; from ABI 6 abstract UNIX sockets and
signals are scoped to the sandbox (it cannot signal processes outside it).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from kope.evaluate import oskernel

_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REFER = 1 << 13
TRUNCATE = 1 << 14
IOCTL_DEV = 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
_NET_BIND_TCP = 1 << 0
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
_SCOPE_SIGNAL = 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def abi_version() -> int:
    """The Landlock ABI this kernel offers; 0 where there is none (or it is disabled)."""
    try:
        return oskernel.syscall(oskernel.LANDLOCK_CREATE_RULESET, 0, 0, _CREATE_RULESET_VERSION)
    except OSError:
        return 0


def handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


@dataclass
class Ruleset:
    """What a Landlock-confined process may touch."""

    read_only: list[str] = field(default_factory=list)
    read_write: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)

    def protections(self, abi: int) -> list[str]:
        names = ["landlock-filesystem"]
        if abi >= 4:
            names.append("landlock-tcp")
        if abi >= 6:
            names.append("landlock-scope-signals-sockets")
        return names

    def restrict_self(self, abi: int) -> None:
        """Confine this process and its future children; needs no_new_privs. Raises OSError."""
        fs = handled_fs(abi)
        attr = _RulesetAttr(fs, _NET_BIND_TCP | _NET_CONNECT_TCP, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
        size = 8 if abi < 4 else (16 if abi < 6 else 24)
        fd = oskernel.syscall(oskernel.LANDLOCK_CREATE_RULESET, ctypes.c_void_p(ctypes.addressof(attr)), size, 0)
        try:
            read = EXECUTE | READ_FILE | READ_DIR
            self._add(fd, self.read_only, read)
            self._add(fd, self.read_write, fs)
            self._add(fd, self.devices, READ_FILE | WRITE_FILE)
            oskernel.syscall(oskernel.LANDLOCK_RESTRICT_SELF, fd, 0)
        finally:
            os.close(fd)

    @staticmethod
    def _add(ruleset: int, paths: Iterable[str], rights: int) -> None:
        for path in paths:
            try:
                target = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = rights if os.path.isdir(path) else rights & _FILE_RIGHTS
                rule = _PathBeneath(allowed, target)
                oskernel.syscall(
                    oskernel.LANDLOCK_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.c_void_p(ctypes.addressof(rule)), 0
                )
            finally:
                os.close(target)
