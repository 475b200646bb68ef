"""The Linux kernel interfaces the sandbox needs, through ctypes: namespaces, mounts, capabilities.

Each function raises `OSError` with the kernel's errno when the call fails, so the caller can fall
back and say why. Nothing here runs at import time; `libc()` is loaded on first use.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWCGROUP = 0x02000000
CLONE_NAMESPACES = (
    CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP
)

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2

PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
PR_SET_PDEATHSIG = 1
SECCOMP_MODE_FILTER = 2
CAP_LAST_CAP_FALLBACK = 40

_SYSCALLS = {
    "x86_64": {"pivot_root": 155},
    "aarch64": {"pivot_root": 41},
}
LANDLOCK_CREATE_RULESET = 444
LANDLOCK_ADD_RULE = 445
LANDLOCK_RESTRICT_SELF = 446


@functools.cache
def libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def machine() -> str:
    return platform.machine()


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def unshare(flags: int) -> None:
    _check(libc().unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda text: text.encode() if text is not None else None  # noqa: E731
    result = libc().mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data))
    _check(result, f"mount {target}")


def umount(target: str, flags: int = 0) -> None:
    _check(libc().umount2(target.encode(), ctypes.c_int(flags)), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    number = _SYSCALLS.get(machine(), {}).get("pivot_root")
    if number is None:
        raise OSError(38, f"pivot_root: no syscall number known for {machine()}")
    _check(libc().syscall(ctypes.c_long(number), new_root.encode(), put_old.encode()), "pivot_root")


def sethostname(name: str) -> None:
    data = name.encode()
    _check(libc().sethostname(data, ctypes.c_size_t(len(data))), "sethostname")


def prctl(option: int, arg2: int = 0, arg3: int | ctypes.c_void_p = 0, arg4: int = 0, arg5: int = 0) -> int:
    value = arg3 if isinstance(arg3, ctypes.c_void_p) else ctypes.c_ulong(arg3)
    return _check(
        libc().prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), value, ctypes.c_ulong(arg4), ctypes.c_ulong(arg5)),
        f"prctl {option}",
    )


def syscall(number: int, *args: int | ctypes.c_void_p) -> int:
    converted = [a if isinstance(a, ctypes.c_void_p) else ctypes.c_long(a) for a in args]
    return _check(libc().syscall(ctypes.c_long(number), *converted), f"syscall {number}")


def no_new_privs() -> None:
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return CAP_LAST_CAP_FALLBACK


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32))


def drop_capabilities(last_cap: int) -> None:
    """Empty the bounding set and the effective, permitted and inheritable sets of this process."""
    for cap in range(last_cap + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno != 22:  # EINVAL: a capability this kernel does not know
                raise
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(libc().capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def write_id_maps(outer_uid: int, outer_gid: int) -> None:
    """After unshare(CLONE_NEWUSER): map root inside to the caller's ids outside."""
    with open("/proc/self/setgroups", "w") as handle:
        handle.write("deny")
    with open("/proc/self/uid_map", "w") as handle:
        handle.write(f"0 {outer_uid} 1")
    with open("/proc/self/gid_map", "w") as handle:
        handle.write(f"0 {outer_gid} 1")
