"""Tolerances: per-dtype (atol, rtol) pairs, grouped in named profiles.

    strict       kope's own tolerances (about 1e-4 in float32): the default for kope's tasks
    kernelbench  the tolerances of KernelBench's evaluation (atol = rtol = 1e-2 in float32), under
                 which the pipelines that wrote KernelBench candidates judged them
    auto         (a choice, not a profile) kernelbench for a KernelBench task file, strict elsewhere

Where the values come from (ScalingIntelligence/KernelBench, `src/eval.py`, `run_and_check_correctness`):
KernelBench v0 and v0.1 compare every output with `torch.allclose(output, output_new, atol=1e-02,
rtol=1e-02)`, whatever the dtype; its later `get_tolerance_for_precision` keeps 1e-2 for float16 and
bfloat16 (and tightens float32 to 1e-4, which is kope's strict value). So `kernelbench` is 1e-2 for
float64, float32, float16 and bfloat16; float8 keeps strict's wider values (KernelBench has none).

A task's own `TOLERANCES` win over any profile, dtype by dtype (see `Evaluator.tolerances`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict

from kope.protocol.results import ToleranceProfile


class Tolerance(BaseModel):
    """An element passes when |candidate - reference| <= atol + rtol * |reference|."""

    model_config = ConfigDict(frozen=True)

    atol: float
    rtol: float


EXACT = Tolerance(atol=0.0, rtol=0.0)

ToleranceChoice = Literal["strict", "kernelbench", "auto"]
PROFILE_NAMES: tuple[ToleranceProfile, ...] = get_args(ToleranceProfile)
CHOICES: tuple[ToleranceChoice, ...] = get_args(ToleranceChoice)

_FLOAT8 = {
    "float8_e4m3fn": Tolerance(atol=1.25e-1, rtol=1.25e-1),
    "float8_e5m2": Tolerance(atol=2.5e-1, rtol=2.5e-1),
}
_KERNELBENCH = Tolerance(atol=1e-2, rtol=1e-2)

PROFILES: dict[ToleranceProfile, Mapping[str, Tolerance]] = {
    "strict": {
        "float64": Tolerance(atol=1e-7, rtol=1e-7),
        "float32": Tolerance(atol=1e-4, rtol=1e-4),
        "float16": Tolerance(atol=1e-2, rtol=1e-2),
        "bfloat16": Tolerance(atol=2e-2, rtol=2e-2),
        **_FLOAT8,
    },
    "kernelbench": {
        "float64": _KERNELBENCH,
        "float32": _KERNELBENCH,
        "float16": _KERNELBENCH,
        "bfloat16": _KERNELBENCH,
        **_FLOAT8,
    },
}
"""Floating dtypes not listed in a profile, integers and booleans compare exactly."""

DEFAULT_TOLERANCES: Mapping[str, Tolerance] = PROFILES["strict"]

_KERNELBENCH_PATH = re.compile(r"(?:^|/)level(\d+)/(\d+)_[A-Za-z0-9][\w\-]*\.py$")
"""KernelBench's naming: `level<L>/<N>_<Name>.py` (`level1/19_ReLU.py`)."""


def tolerance_for(
    dtype: str, overrides: Mapping[str, Tolerance] | None = None, profile: ToleranceProfile = "strict"
) -> Tolerance:
    """The tolerance of `dtype`: the task's override, else the profile's, else exact."""
    if overrides and dtype in overrides:
        return overrides[dtype]
    return PROFILES[profile].get(dtype, EXACT)


class TaskFile(Protocol):
    """What `auto` reads of a task (`kope.cases.task.Task`)."""

    @property
    def path(self) -> Path: ...

    @property
    def assigned_names(self) -> tuple[str, ...]: ...

    @property
    def defines_get_cases(self) -> bool: ...


def is_kernelbench_task(task: TaskFile) -> bool:
    """A KernelBench problem file: named `level<L>/<N>_<Name>.py`, with neither `get_cases()` nor
    `TOLERANCES` (a task that declares either was written for kope)."""
    if task.defines_get_cases or "TOLERANCES" in task.assigned_names:
        return False
    return _KERNELBENCH_PATH.search(task.path.as_posix()) is not None


def resolve_profile(choice: ToleranceChoice, task: TaskFile) -> tuple[ToleranceProfile, str]:
    """The profile a choice means for `task`, and why (shown in results)."""
    if choice != "auto":
        return choice, f"--tolerance {choice}"
    if is_kernelbench_task(task):
        return "kernelbench", "auto: a KernelBench task file (levelL/N_Name.py)"
    return "strict", "auto: not a KernelBench task file"


def other_profiles(profile: ToleranceProfile) -> tuple[ToleranceProfile, ...]:
    return tuple(p for p in PROFILE_NAMES if p != profile)
