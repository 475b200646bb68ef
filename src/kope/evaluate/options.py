"""How to evaluate: the options of one evaluation (device, trials, limits, gates, sandbox, tolerances)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kope.cases.tolerance import ToleranceChoice
from kope.evaluate.confine import Settings
from kope.evaluate.sandbox import SandboxLimits
from kope.protocol import TraceSpec
from kope.protocol.results import ModuleMode
from kope.protocol.sandbox import SandboxMode

Which = Literal["all", "visible"] | Sequence[str]
"""Which cases to evaluate: all, the visible ones, or these by name."""


@dataclass(frozen=True)
class EvalOptions:
    """How to evaluate: device, trials per case, seed, limits, timing."""

    device: str = "cpu"
    trials: int = 3
    seed: int = 0
    timeout_s: float = 60.0
    memory_mb: int | None = 4096
    timing: bool = False
    timing_budget_ms: float = 200.0
    integrity: bool = True
    """Run the integrity gates (static and dynamic); a numerically passing candidate they reject is `reject`."""
    speedup_bound: float = 50.0
    """On CUDA, a speedup above this is flagged for review (`implausible-speedup`)."""
    bounds_check: bool = False
    """CPU only: check every load and store of the candidate's kernels against their tensors."""
    trace: TraceSpec | None = None
    """CPU only: record a kernel's local variables at one line for one program."""
    extra_env: Mapping[str, str] = field(default_factory=dict)
    max_elements: int | None = None
    """Derived cases (tasks without get_cases()): input elements per case; None is the device's default."""
    sandbox: SandboxMode = "auto"
    """The OS boundary around every job (`kope.evaluate.confine`): `auto` the strongest this machine
    allows, `strict` refuses to run without namespaces, `off` process isolation only."""
    disk_mb: int = 4096
    """The most a job may write: the largest file, and the growth of its directory (outputs included)."""
    policy: Literal["strict", "partial"] | None = None
    """The integrity policy; None: the task's INTEGRITY_POLICY, else decided from what the reference calls."""
    tolerance: ToleranceChoice = "auto"
    """The tolerance profile (`kope.cases.tolerance`): strict, kernelbench, or auto (kernelbench for a
    KernelBench task file, strict elsewhere); a task's own TOLERANCES win dtype by dtype."""
    interpreter_retries: int = 2
    """CPU: when the first case of derived cases outlives its time limit in Triton's interpreter, derive the
    cases again at a quarter of the element budget and evaluate again, at most this many times (convolutions
    and matrix products written for a GPU launch thousands of programs, which the interpreter runs one by one)."""
    module_mode: ModuleMode = "train"
    """The mode both models run in: `train` (PyTorch's default; KernelBench's harness never calls `.eval()`)
    or `eval` (BatchNorm on its running statistics, Dropout off: what a pipeline that calls `.eval()` judged)."""
    cuda_emulation: bool = True
    """On the CPU: a candidate written for CUDA runs in the interpreter as on a GPU (`kope.evaluate.inside.cuda`);
    every result made so says so. Never on a GPU."""
    overflow_check: bool = False
    """On the CPU: Triton's interpreter checks every 32-bit integer `+`, `-` and `*` for overflow, an assertion
    error where one wraps (off by default: a GPU wraps them unchecked, honest hashes rely on it, and the check
    triples the time of an index-heavy kernel)."""
    gpu_frontend: bool = True
    """On the CPU: every interpreted launch is first lowered by Triton's GPU front end, and a kernel the GPU
    compiler refuses (a helper without `@triton.jit`, `continue`...) is a runtime error, as on a GPU
    (`kope.evaluate.inside.frontend`). Off: the interpreter's verdict alone."""

    coverage: bool = True
    """On derived cases: where the candidate's host launches a kernel only on a branch of sizes no case took, a larger
    case that takes it is tried and judged (`kope.evaluate.judging.unlaunched`), in a repair session's full checks too
    (so a start triage judged wrong there is not "already right" to the repair). Off: the derived cases alone."""

    @property
    def emulates_cuda(self) -> bool:
        return self.cuda_emulation and not self.device.startswith("cuda")

    def limits(self, hidden: tuple[str, ...] = ()) -> SandboxLimits:
        return SandboxLimits(
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            address_space=not self.device.startswith("cuda"),
            extra_env=dict(self.extra_env),
            sandbox=Settings(mode=self.sandbox, disk_mb=self.disk_mb, hidden=hidden),
        )
