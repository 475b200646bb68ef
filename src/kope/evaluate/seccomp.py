"""A seccomp-bpf filter for sandboxed workers: refuse the system calls a hostile kernel could abuse.

Refused with `EPERM` (so the candidate gets a Python `PermissionError` kope can report) rather than
killing: debugging and reading other processes (`ptrace`, `process_vm_readv/writev`, `pidfd_getfd`,
`kcmp`), changing the filesystem view (`mount`, `umount2`, `pivot_root`, `chroot`, the new mount
API), leaving the sandbox (`unshare`, `setns`, `clone` with namespace flags), the kernel keyring,
`bpf`, `perf_event_open`, `userfaultfd`, `kexec_*`, `reboot`, module loading, swap, clocks, quotas, and
`io_uring` (its submission queue performs `socket`, `connect`, `openat` and more inside the kernel, where
this filter never sees them).
`clone3` answers `ENOSYS`, so the C library falls back to `clone`, whose flags the filter can see.
`socket` is allowed only for the families a network namespace confines (`AF_UNIX`, `AF_INET`, `AF_INET6`,
`AF_NETLINK`: its own loopback and tables) and only where the sandbox has one; every other family is refused
everywhere (`AF_VSOCK` reaches a hypervisor's host whatever the namespace, `AF_XDP`, `AF_PACKET`, `AF_ALG`...), and
without a network namespace every family is (a UNIX socket of the host, such as a container daemon's, the host's
netlink tables; `socketpair` stays).
System calls of another architecture (the i386 or x32 entry points on x86_64) are all refused.
"""

from __future__ import annotations

import ctypes
import errno
from dataclasses import dataclass

from kope.evaluate import oskernel

_DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
    "open_tree", "mount_setattr", "unshare", "setns", "keyctl", "add_key", "request_key", "bpf",
    "perf_event_open", "userfaultfd", "open_by_handle_at", "kexec_load", "kexec_file_load", "reboot",
    "init_module", "finit_module", "delete_module", "swapon", "swapoff", "acct", "quotactl",
    "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
)  # fmt: skip
"""The system calls refused outright (names; numbers per architecture below)."""

_NUMBERS: dict[str, dict[str, int]] = {
    "x86_64": {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438, "kcmp": 312,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
        "unshare": 272, "setns": 308, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "open_by_handle_at": 304, "kexec_load": 246,
        "kexec_file_load": 320, "reboot": 169, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179, "settimeofday": 164, "clock_settime": 227,
        "adjtimex": 159, "clock_adjtime": 305, "clone": 56, "clone3": 435, "socket": 41,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    },
    "aarch64": {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438, "kcmp": 272,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
        "unshare": 97, "setns": 268, "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "open_by_handle_at": 265, "kexec_load": 104,
        "kexec_file_load": 294, "reboot": 142, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60, "settimeofday": 170, "clock_settime": 112,
        "adjtimex": 171, "clock_adjtime": 266, "clone": 220, "clone3": 435, "socket": 198,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    },
}  # fmt: skip
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000
NAMESPACED_FAMILIES = (1, 2, 10, 16)
"""AF_UNIX, AF_INET, AF_INET6, AF_NETLINK: the socket families a network namespace confines, the only ones allowed
(and only inside one)."""

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_ARCH_OFFSET = 4
_NR_OFFSET = 0
_ARG0_OFFSET = 16  # low 32 bits of args[0] on a little-endian machine


class _Instruction(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32))


class _Program(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction)))


@dataclass(frozen=True)
class _Op:
    code: int
    k: int
    true: str | None = None
    false: str | None = None
    label: str | None = None


def supported(machine: str | None = None) -> bool:
    return (machine or oskernel.machine()) in _NUMBERS


def build(machine: str, *, deny_network: bool) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions for `machine` (x86_64 or aarch64)."""
    numbers = _NUMBERS[machine]
    ops: list[_Op] = [_Op(_LD_W_ABS, _ARCH_OFFSET), _Op(_JEQ_K, _AUDIT_ARCH[machine], false="deny")]
    ops.append(_Op(_LD_W_ABS, _NR_OFFSET))
    if machine == "x86_64":
        ops.append(_Op(_JGE_K, _X32_SYSCALL_BIT, true="deny"))
    ops += [_Op(_JEQ_K, numbers[name], true="deny") for name in _DENIED]
    ops.append(_Op(_JEQ_K, numbers["clone3"], true="nosys"))
    ops.append(_Op(_JEQ_K, numbers["clone"], true="clone"))
    ops.append(_Op(_JEQ_K, numbers["socket"], true="deny" if deny_network else "socket"))
    ops.append(_Op(_RET_K, _RET_ALLOW, label="allow"))
    ops.append(_Op(_LD_W_ABS, _ARG0_OFFSET, label="clone"))
    ops.append(_Op(_JSET_K, oskernel.CLONE_NAMESPACES, true="deny"))
    ops.append(_Op(_RET_K, _RET_ALLOW))
    if not deny_network:
        ops.append(_Op(_LD_W_ABS, _ARG0_OFFSET, label="socket"))
        ops += [_Op(_JEQ_K, family, true="allow_socket") for family in NAMESPACED_FAMILIES]
        ops.append(_Op(_RET_K, _RET_ERRNO | errno.EPERM))
        ops.append(_Op(_RET_K, _RET_ALLOW, label="allow_socket"))
    ops.append(_Op(_RET_K, _RET_ERRNO | errno.ENOSYS, label="nosys"))
    ops.append(_Op(_RET_K, _RET_ERRNO | errno.EPERM, label="deny"))
    where = {op.label: index for index, op in enumerate(ops) if op.label}

    def offset(index: int, target: str | None) -> int:
        if target is None:
            return 0
        distance = where[target] - index - 1
        assert 0 <= distance < 256, "seccomp jump out of range"
        return distance

    return [(op.code, offset(i, op.true), offset(i, op.false), op.k) for i, op in enumerate(ops)]


def install(*, deny_network: bool) -> None:
    """Install the filter on this thread's process (needs no_new_privs first); raises OSError."""
    machine = oskernel.machine()
    if not supported(machine):
        raise OSError(errno.ENOSYS, f"no seccomp system-call table for {machine}")
    instructions = build(machine, deny_network=deny_network)
    array = (_Instruction * len(instructions))(*[_Instruction(*i) for i in instructions])
    program = _Program(len(instructions), array)
    oskernel.prctl(oskernel.PR_SET_SECCOMP, oskernel.SECCOMP_MODE_FILTER, ctypes.c_void_p(ctypes.addressof(program)))


def available() -> bool:
    """Whether this kernel offers seccomp filters with the errno action."""
    try:
        with open("/proc/sys/kernel/seccomp/actions_avail") as handle:
            return "errno" in handle.read().split()
    except OSError:
        return False
