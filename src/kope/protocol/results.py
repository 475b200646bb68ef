"""Typed results of an evaluation: what `kope eval --json` prints."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from kope.protocol import AutotuneRun, BoundsEvent, TraceHit
from kope.protocol.inputs import InputTransform
from kope.protocol.sandbox import SandboxReport

ToleranceProfile = Literal["strict", "kernelbench"]
ModuleMode = Literal["train", "eval"]
"""The mode both models run in: `train` (PyTorch's default, KernelBench's harness) or `eval` (inference:
BatchNorm uses its running statistics, Dropout is the identity; what pipelines that call `.eval()` judge)."""
"""The named tolerance profiles a result is judged under (their tolerances: `kope.cases.tolerance`)."""

ErrorKind = Literal[
    "syntax",  # the candidate does not parse
    "import",  # an import in the candidate failed
    "load",  # executing the module, finding ModelNew or constructing it failed
    "runtime",  # forward raised
    "timeout",  # the run outlived its wall-time limit
    "crash",  # the process died from a signal (segfault, abort...)
    "memory",  # the run exceeded its memory limit
    "disk",  # the run wrote more than its disk limit (a file past the size limit, or a full job directory)
    "exit",  # the process ended without a (valid) result, whatever its exit code
    "shape",  # the outputs' structure, shape or dtype differ from the reference's
    "task",  # the task or its reference failed: not the candidate's fault
    "too-large",  # no case of the task fits the element budget and the job's memory: nothing ran
    "interpreter",  # the candidate needs what Triton's CPU interpreter (or a CPU-only PyTorch) lacks
    "unsupported",  # under CUDA emulation: what cannot run without a GPU (CUDA C++, inline PTX, torch.compile)
]
EvalStatus = Literal["pass", "fail", "reject", "error"]

MACHINE_ERRORS: frozenset[str] = frozenset(
    {"timeout", "memory", "disk", "task", "too-large", "interpreter", "unsupported"}
)
"""Errors that say nothing of a version's values: a limit of the machine or the platform, or the task's own failure
(where a version raises, crashes or gives the wrong shape, it did)."""


class EvalError(BaseModel):
    kind: ErrorKind
    message: str
    traceback: str | None = None
    """The tail of the traceback, for `runtime`, `load` and `import` errors."""
    hint: str | None = None
    """What would make it run (`too-large`: the option that makes a case fit; `interpreter`: `--device cuda`)."""


class Finding(BaseModel):
    rule: str
    severity: Literal["reject", "warn"]
    message: str
    line: int | None = None


class Integrity(BaseModel):
    verdict: Literal["clean", "reject"] = "clean"
    findings: list[Finding] = Field(default_factory=list)
    checked: bool = False
    policy: Literal["strict", "partial"] | None = None
    """Which provenance policy applied (see docs/guide/integrity.md)."""
    policy_reason: str | None = None
    """Why: --policy, the task's INTEGRITY_POLICY, or what the reference's forward calls."""
    """False when the gates did not run (they were turned off, or the candidate never loaded)."""


class Timing(BaseModel):
    method: Literal["cuda-events", "interpreter-wall", "cpu-wall"]
    """`cuda-events`: median of timed runs with a cache flush and device-wide synchronisation;
    `interpreter-wall`: wall time of the Triton interpreter on the CPU, not a speed measure."""
    candidate_ms: float
    reference_ms: float | None = None
    speedup: float | None = None
    runs: int = 0


class OutputDiff(BaseModel):
    """Comparison of one output tensor (of one trial) with the reference."""

    index: int
    shape: list[int]
    dtype: str
    numel: int
    mismatch_count: int
    max_abs_err: float
    max_rel_err: float
    mean_abs_err: float = 0.0
    """The mean absolute error over the elements finite in both: how far the values are as a whole, which moves
    when an edit brings every element closer though none within tolerance (the worst one may not move)."""
    first_mismatch: list[int] | None = None
    """Index of the first element out of tolerance, in the output's own shape."""
    worst_index: list[int] | None = None
    nan_mismatch: int = 0
    """Elements where NaN/Inf in the candidate and the reference are not at the same place."""
    atol: float
    rtol: float
    mismatches_under: dict[ToleranceProfile, int] = Field(default_factory=dict, exclude=True)
    """Mismatches under the other tolerance profiles, counted in the same pass (for `CaseResult.passed_under`)."""
    constant: float | None = None
    """The one value every element of the candidate's output holds, where the reference's values vary (set only on a
    mismatch): the output no longer depends on the inputs (a zeroed buffer, a store of a constant). Such values are
    not near the reference's whatever their error: `kope.loop.version_score` counts every element as wrong."""
    candidate_shape: list[int] | None = None
    """The candidate's shape, where it differs from the reference's (`shape`) and `shape_fix` reconciles them."""
    shape_fix: str | None = None
    """A change of the returned value's shape that makes every element right (`.reshape(())`, `.squeeze()`,
    `.unsqueeze(0)`, `.transpose(-2, -1)`...): the output is wrong as returned (every element counts as a
    mismatch when the shapes differ) and right up to that fix. The errors are measured after it."""


class CaseResult(BaseModel):
    name: str
    overrides: dict[str, Any]
    inputs: InputTransform | None = None
    """The case's change of input distribution (floating-point inputs became `x * scale + shift`)."""
    visible: bool
    passed: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatch_fraction: float | None = None
    mismatch_count: int | None = None
    numel: int | None = None
    error: EvalError | None = None
    trials: int = 0
    outputs: list[OutputDiff] = Field(default_factory=list)
    """Per-output comparison for the worst trial."""
    timing: Timing | None = None
    reference_precision: Literal["float64", "native"] = "float64"
    findings: list[Finding] = Field(default_factory=list)
    """Integrity findings observed while this case ran (all of them also appear in `integrity`)."""
    bounds: list[BoundsEvent] = Field(default_factory=list)
    """Out-of-bounds accesses, when the bounds checker ran (`EvalOptions.bounds_check`)."""
    trace: list[TraceHit] | None = None
    """Kernel locals at the traced line, when a trace was asked for."""
    stdout: str = ""
    """What the candidate printed (capped), for debugging."""

    passed_under: dict[ToleranceProfile, bool] = Field(default_factory=dict)
    """The case's numeric verdict under every tolerance profile, from the same outputs (empty on an error)."""
    outside: str | None = None
    """The candidate's own precondition refused this case's sizes, which are not the task's own (`line 166: assert
    H % 2 == 0`; `kope.evaluate.preconditions`): the case says nothing of its values and is not judged (its error,
    kind `unsupported`, says so)."""
    shape_fix: str | None = None
    """The values are right up to this change of the output's shape (e.g. `.reshape(())`, `.t()`):
    the case fails, as a near miss, and `notes` says so."""
    notes: list[str] = Field(default_factory=list)
    """What the comparison noticed beyond the numbers (a shape-only difference and its fix)."""
    autotune: list[AutotuneRun] = Field(default_factory=list)
    """CPU interpreter: the configs of autotuned kernels that ran, and for which trials (each trial runs
    the next config, so with three trials up to three configs are checked). Timing belongs to the GPU."""
    sandbox: SandboxReport | None = Field(default=None, exclude=True)
    """What protected this case's candidate run (summarised once in `EvalResult.sandbox`)."""
    emulated: list[str] | None = Field(default=None, exclude=True)
    """Under CUDA emulation: what the candidate asked of CUDA in this case (summarised in `EvalResult.emulation`)."""
    parameter_pairs: list[tuple[str, str, bool]] = Field(default_factory=list, exclude=True)
    """How the reference's tensors were paired with the candidate's on this case (`WorkerResult.parameter_pairs`):
    the evaluation hands the first case's to the others."""
    forward_s: float | None = Field(default=None, exclude=True)
    """The slowest trial's forward, in seconds (the evaluator's cost probe reads it on the CPU interpreter)."""
    launched: list[str] = Field(default_factory=list)
    """The candidate's kernels this case launched, by name (where the worker reported its observations)."""

    @property
    def shows_bug(self) -> bool:
        """Failed with wrong values or an error the version made (not a limit of the machine: `MACHINE_ERRORS`)."""
        return not self.passed and (self.error is None or self.error.kind not in MACHINE_ERRORS)


class Emulation(BaseModel):
    """How a candidate written for CUDA ran on a machine without a GPU (`kope.evaluate.inside.cuda`)."""

    note: str = "CUDA emulated on the CPU interpreter"
    used: list[str] = Field(default_factory=list)
    """What the candidate asked of CUDA (`torch.cuda.get_device_properties`, `device='cuda'`, ...)."""


class ProfileDisagreement(BaseModel):
    """The tolerance profiles judge the same outputs differently (say, pass under kernelbench, fail under strict)."""

    strict: Literal["pass", "fail"]
    kernelbench: Literal["pass", "fail"]
    max_abs_err: float
    """The worst absolute error over the cases on which they disagree."""
    max_rel_err: float
    cases: list[str] = Field(default_factory=list)
    """The cases on which they disagree."""


class LowSignal(BaseModel):
    """A task whose own inputs say little about a kernel, and the cases derived to judge it."""

    reason: str
    """What the reference's output does on the task's own inputs (equals input 0, is constant, is near zero)."""
    extra_cases: list[str]
    """The cases from a widened input distribution (signed, scaled, with outliers) where the reference's
    output has signal; copy and constant kernels are judged there."""


class EvalResult(BaseModel):
    status: EvalStatus
    """`pass`; `fail`: wrong values on some case (even when the gates also object: see `integrity`);
    `reject`: right values on every case, rejected by the integrity gates; `error`: it did not run."""
    error: EvalError | None = None
    cases: list[CaseResult]
    integrity: Integrity = Field(default_factory=Integrity)
    timing: Timing | None = None
    """Timing of the first case that ran, when measured."""
    cases_run: Literal["visible", "all", "selected"]
    task: str
    candidate: str
    device: str
    seed: int
    seconds: float = 0.0
    low_signal: LowSignal | None = None
    """Set when the task's own inputs say little about a kernel (the reference's output equals an input, is
    constant or near zero): why, and the widened cases on which copies were judged instead."""
    smaller_cases: str | None = None
    """Set when the cases were derived again at a smaller element budget on the CPU interpreter
    (`EvalOptions.interpreter_retries`): because the first case outlived its time limit, or because the cost
    probe (the smallest case, run first) predicted it would; what was done and why."""
    sandbox: SandboxReport | None = None
    """What protected the candidate's runs: the weakest level among them and the protections that held
    in all of them (None when the candidate never ran)."""
    emulation: Emulation | None = None
    """Set when the candidate ran with CUDA emulated on the CPU interpreter: every verdict made so says so."""
    tolerance_profile: ToleranceProfile = "strict"
    """The tolerance profile the cases were judged with (a task's own TOLERANCES override it per dtype)."""
    module_mode: ModuleMode = "train"
    """The mode the reference and the candidate ran in (`EvalOptions.module_mode`)."""
    tolerance_reason: str | None = None
    """Why that profile (`--tolerance kernelbench`, or what `auto` decided)."""
    profile_disagreement: ProfileDisagreement | None = None
    """Set when another profile would judge the same outputs differently."""
    limits: list[str] = Field(default_factory=list)
    """What the platform, not the kernel, may account for in a failure (`interpreter-limit: ...`, `tf32: ...`)."""
    unlaunched: list[str] = Field(default_factory=list)
    """Kernels the candidate's host code launches on a branch no case took (`if M * N <= 65536: small[...] else:
    large[...]`): their values are unchecked, whatever the verdict (`kope.evaluate.judging.unlaunched`); where a
    larger case took that branch, it was judged with the others (its name starts `coverage`)."""

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "reject": 1, "error": 2}[self.status]
