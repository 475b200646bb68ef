"""What this machine offers the sandbox, and which level a job gets here (`kope doctor`).

The level is measured, not inferred: a trivial job runs through the real supervisor in each mode,
and its report says what held. The kernel settings that usually explain a refusal are read too.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from kope.evaluate import landlock, seccomp
from kope.evaluate.confine import Settings
from kope.evaluate.sandbox import SandboxLimits, read_outcome, supervise
from kope.evaluate.view import driver_library_dirs, gpu_devices, ldconfig_output
from kope.protocol.sandbox import SandboxReport

_SETTINGS = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/kernel/yama/ptrace_scope",
    "/proc/sys/kernel/seccomp/actions_avail",
)


class MachineReport(BaseModel):
    """What `kope doctor --json` prints."""

    auto: SandboxReport | None
    """What a job gets with `--sandbox auto` (the default) on this machine."""
    landlock_fallback: SandboxReport | None
    """What a job gets where namespaces are refused (forced: `landlock`)."""
    landlock_abi: int
    seccomp: bool
    cgroup_memory: int | None = None
    """The cgroup version in which each job gets a memory cgroup (`kope.evaluate.cgroup`); None: none this user may
    make, and memory is limited by the supervisor's poll and RLIMIT_AS alone."""
    gpu_devices: list[str] = Field(default_factory=list)
    gpu_library_dirs: list[str] = Field(default_factory=list)
    kernel_settings: dict[str, str] = Field(default_factory=dict)
    advice: list[str] = Field(default_factory=list)


def trial(mode: str) -> SandboxReport | None:
    """Run a job that does nothing under `mode`, in a forked single-threaded supervisor."""
    scratch = Path(tempfile.mkdtemp(prefix="kope-doctor-"))
    job = scratch / "job"
    job.mkdir()
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the forked supervisor
            code = 0
            try:
                settings = Settings(mode=mode, hidden=(str(scratch),))  # type: ignore[arg-type]
                supervise(job, SandboxLimits(timeout_s=20, memory_mb=None, sandbox=settings), lambda _: 0)
            except BaseException:
                code = 1
            os._exit(code)
        os.waitpid(pid, 0)
        outcome = read_outcome(job)
        return outcome.sandbox if outcome is not None else None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def inspect_machine() -> MachineReport:
    settings: dict[str, str] = {}
    for path in _SETTINGS:
        try:
            with open(path) as handle:
                settings[path.removeprefix("/proc/sys/").replace("/", ".")] = handle.read().strip()
        except OSError:
            continue
    devices = gpu_devices()

    report = MachineReport(
        auto=trial("auto"),
        landlock_fallback=trial("landlock"),
        landlock_abi=landlock.abi_version(),
        seccomp=seccomp.available() and seccomp.supported(),
        cgroup_memory=_cgroup_version(),
        gpu_devices=devices,
        gpu_library_dirs=driver_library_dirs(ldconfig_output()) if devices else [],
        kernel_settings=settings,
    )
    report.advice = _advice(report)
    return report


def _advice(report: MachineReport) -> list[str]:
    advice: list[str] = []
    level = report.auto.level if report.auto else "process"
    if level == "namespaces":
        advice.append("jobs run in the full namespace sandbox; `--sandbox strict` will work here")
        return advice
    settings = report.kernel_settings
    if settings.get("kernel.apparmor_restrict_unprivileged_userns") == "1":
        advice.append(
            "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): an administrator can set "
            "kernel.apparmor_restrict_unprivileged_userns=0, or add an AppArmor profile allowing `userns` for python"
        )
    if settings.get("kernel.unprivileged_userns_clone") == "0":
        advice.append("user namespaces are disabled: kernel.unprivileged_userns_clone=0 (sysctl -w ...=1 enables them)")
    if settings.get("user.max_user_namespaces") == "0":
        advice.append("user namespaces are disabled: user.max_user_namespaces=0")
    if os.path.exists("/.dockerenv"):
        advice.append(
            "inside Docker, the default seccomp profile refuses namespaces: run the container with "
            "--security-opt seccomp=unconfined, or run kope in a VM"
        )
    if report.landlock_abi == 0:
        advice.append("no Landlock (Linux >= 5.13 with lsm=landlock): the fallback is process isolation only")
    advice.append("for a stronger boundary run kope inside a VM or gVisor (docs/guide/security.md)")
    return advice


def _cgroup_version() -> int | None:
    from kope.evaluate.cgroup import hierarchy

    found = hierarchy()
    return found.version if found is not None else None
