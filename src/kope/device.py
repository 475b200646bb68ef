"""Which device to run on: `cpu` (Triton through its interpreter), `cuda[:N]`, or `auto`."""

from __future__ import annotations

import shutil
from pathlib import Path


def cuda_present() -> bool:
    """Whether an NVIDIA driver is visible, without importing torch."""
    return Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi") is not None


def resolve_device(name: str) -> str:
    """`auto` becomes `cuda` where an NVIDIA driver is present and `cpu` elsewhere."""
    name = name.strip().lower()
    if name == "auto":
        return "cuda" if cuda_present() else "cpu"
    if name == "cpu" or name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        return name
    raise ValueError(f"unknown device {name!r}: use cpu, cuda, cuda:N or auto")
