"""What crosses the boundary between kope and a sandboxed worker, as validated data.

The parent writes `spec.json` (a `JobSpec`); the worker writes `result.json` (a `WorkerResult`)
and tensors as safetensors files (a candidate job sends them through the sealed channel instead, see
`channel`, and the supervisor writes them). The parent never unpickles anything: every file it reads
is JSON or safetensors, and anything that does not validate is an error, never a pass.

This package is the base layer under `kope.cases`, `kope.evaluate` and `kope.integrity`, and the only
kope code that both the parent side (`kope.evaluate`) and the sandboxed side (`kope.evaluate.inside`)
import: the job and worker-result models here, the shapes-job models in `probing`, the sealed channel
in `channel`, the PyTorch allowlist in `policy` (applied statically by the parent and at run time by
the monitor), the supervisor's report in `sandbox`, a case's input transform in `inputs`, and the
typed evaluation results in `results` (what the integrity gates build and `kope eval --json` prints).
It imports nothing else of kope (`tests/test_architecture.py`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kope.protocol.probing import ShapeProbe, ShapeProbeResult

SPEC_FILE = "spec.json"
RESULT_FILE = "result.json"
CANDIDATE_FILE = "candidate.py"
INIT_FILE = "init.safetensors"
STATE_FILE = "state.safetensors"


def check_job_file(path: Path) -> None:
    """Refuse what a job left that is not a plain file: a symbolic link (which the parent would follow
    out of the job directory, into the user's files), a FIFO (which would block it), a device.
    The job's processes are all gone when the parent reads, so the check cannot be raced."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path.name} in the job directory is not a regular file")


def read_job_text(path: Path) -> str:
    check_job_file(path)
    return path.read_text()


def inputs_file(trial: int) -> str:
    return f"inputs_{trial}.safetensors"


def outputs_file(trial: int) -> str:
    return f"outputs_{trial}.safetensors"


class ValueMeta(BaseModel):
    """The structure of a packed Python value; tensors live in a safetensors file under `key`."""

    type: Literal["tensor", "tuple", "list", "dict", "int", "float", "bool", "str", "none"]
    key: str | None = None
    dtype: str | None = None
    """For tensors: the torch dtype name (bfloat16 tensors travel as float32 to the parent)."""
    shape: list[int] | None = None
    value: Any = None
    items: list[ValueMeta] = Field(default_factory=list)
    keys: list[str] = Field(default_factory=list)
    """For dicts: the keys of `items`, in order."""


class IntegritySpec(BaseModel):
    """What the candidate worker's monitor needs to know."""

    extra_allow: list[str] = Field(default_factory=list)
    copy_tolerance: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Per floating dtype (torch's name): the (atol, rtol) of the run's comparison. A kernel store within it of
    one load's values is a copy: at the precision the verdict judges, it computed nothing (an ulp's nudge or a
    dtype round trip does not make a copy a computation)."""


class TraceSpec(BaseModel):
    kernel: str
    line: int
    pid: list[int] = Field(default_factory=lambda: [0, 0, 0])


class TraceHit(BaseModel):
    pid: list[int]
    variables: dict[str, str]


class BoundsEvent(BaseModel):
    """An access the bounds checker found outside every tensor of a launch."""

    kernel: str
    line: int | None
    kind: str
    """load, store or atomic"""
    pid: list[int]
    lanes: int
    """How many lanes of the access were out of bounds."""
    elements_out: int
    """How far the farthest lane was outside the nearest tensor, in elements of the accessed type."""
    nearest: str
    """Which argument the farthest lane was nearest to, and on which side."""
    count: int = 1
    """How many accesses (programs, loop iterations) hit this kernel, line and kind."""


class JobSpec(BaseModel):
    mode: Literal["plan", "reference", "candidate", "shapes"]
    device: str = "cpu"
    task_source: str | None = None
    task_path: str | None = None
    candidate_path: str | None = None
    """The path the user gave, used to name the file in messages; the worker runs its own copy."""
    init_seed: int = 0
    trial_seeds: list[int] = Field(default_factory=list)
    """Reference jobs: each trial's input seed. A candidate job gets none (it could rebuild every trial's inputs
    from them before the first call): only `trials`, their number."""
    trials: int = 0
    """Candidate jobs: how many trials the feed hands over, one at a time."""
    timing: bool = False
    timing_budget_ms: float = 200.0
    integrity: IntegritySpec | None = None
    bounds_check: bool = False
    """Candidate jobs on the CPU: check every load and store against the launch's tensors."""
    trace: TraceSpec | None = None
    input_scale: float = 1.0
    input_shift: float = 0.0
    input_pattern: str | None = None
    """Reference jobs: floating-point inputs become `x * input_scale + input_shift` after `get_inputs()`."""
    shape_probes: list[ShapeProbe] = Field(default_factory=list)
    deadline_s: float | None = None
    """Shapes jobs: start no further reference run after this many seconds."""
    module_mode: Literal["train", "eval"] = "train"
    """Reference, shapes and candidate jobs: the mode both models are put in before their first forward."""
    cuda_emulation: bool = False
    """Jobs on the CPU: CUDA emulated for code written for a GPU (`kope.evaluate.inside.cuda`): a candidate's, and a
    task file's own CUDA allocations (reference and shapes jobs)."""
    overflow_check: bool = False
    """Candidate jobs on the CPU: the interpreter checks 32-bit integer arithmetic for overflow (`EvalOptions`)."""
    gpu_frontend: bool = True
    """Candidate jobs on the CPU: each launch lowered by Triton's GPU front end first (`EvalOptions`)."""
    other_sizes: bool = False
    """Candidate jobs: the case's sizes are not the task's own (a derived case that overrides them)."""
    parameter_pairs: list[tuple[str, str, bool]] = Field(default_factory=list, max_length=100_000)
    """Candidate jobs: how the evaluation's first case paired the reference's tensors with the candidate's (reference
    name, candidate name, stored transposed), applied first where they still fit: a case of other sizes can give two
    tensors one shape (the biases of two layers of width one) that the first case's sizes told apart."""
    size_globals: dict[str, tuple[Any, Any]] = Field(default_factory=dict)
    """Candidate jobs: the task's module-level sizes the case changes, (the task's own value, the case's). A candidate
    module that assigns one of them the task's own value (a copy of the task's globals, which a `ModelNew.__init__`
    may read as the reference's `__init__` does: `self.h0 = torch.randn((layers, batch_size, hidden))`) gets the
    case's value before its model is built."""


class WorkerError(BaseModel):
    kind: Literal[
        "syntax", "import", "load", "runtime", "memory", "disk", "shape", "task", "interpreter", "unsupported"
    ]
    message: str
    traceback: str | None = None
    hint: str | None = None


class TrialRecord(BaseModel):
    index: int
    outputs: ValueMeta
    seconds: float


class PlanInfo(BaseModel):
    cases: list[Any] | None = None
    sizes: dict[str, Any] = Field(default_factory=dict)
    tolerances: dict[str, Any] | None = None
    allow_torch: list[str] = Field(default_factory=list)
    """The task's ALLOW_TORCH: PyTorch calls its candidates may make (see kope.protocol.policy)."""
    integrity_policy: Literal["strict", "partial"] | None = None
    """The task's INTEGRITY_POLICY, when it sets one."""


class TorchCall(BaseModel):
    name: str
    line: int | None = None
    count: int = 1


class HostEvent(BaseModel):
    """Tensor data read into Python, or a tensor built from Python data, during forward."""

    what: str
    line: int | None = None
    count: int = 1
    from_inputs: bool = False
    """Host reads: the data read derives from the task's inputs."""
    elements: int = 0
    """Host-built tensors: how many elements the largest one held."""


class OutputPart(BaseModel):
    """Where the values of (a piece of) one output came from."""

    path: str
    fraction: float = 1.0
    """Of the output's bytes."""
    inputs: list[int] = Field(default_factory=list)
    kernel: bool = False
    """A computing kernel of the candidate, reading task-input data, is on its path."""
    copied: bool = False
    """A kernel of the candidate only copied it."""
    torch_ops: list[str] = Field(default_factory=list)
    init_ops: list[str] = Field(default_factory=list)
    host: bool = False
    fill: bool = False
    state: bool = False
    unknown: bool = False
    constant: bool = False
    """Parts no computing kernel wrote: every element holds one value (a fill, a constant), which
    the numeric check judges (a constant output is wrong, not a cheat, unless the task is degenerate)."""
    moves: list[str] = Field(default_factory=list)
    """PyTorch moving task data on its path (`Label.moves`: a rearrangement, advanced indexing, an assignment or a
    copy into another tensor)."""


class Provenance(BaseModel):
    """Run-time provenance of the candidate's outputs (see `kope.evaluate.inside.provenance`)."""

    method: Literal["interpreter", "arguments"] = "interpreter"
    """interpreter: every load and store of the kernels is seen; arguments: a launch's tensor arguments
    and a before/after comparison of their contents (GPU)."""
    outputs: list[OutputPart] = Field(default_factory=list)
    host_reads: list[HostEvent] = Field(default_factory=list)
    host_built: list[HostEvent] = Field(default_factory=list)
    torch_on_inputs: list[TorchCall] = Field(default_factory=list)
    """PyTorch compute operations in forward on task-input data no kernel of the candidate computed."""
    epilogue: list[TorchCall] = Field(default_factory=list)
    """PyTorch compute operations in forward whose task-derived inputs all come from the kernels."""
    torch_elements: int = 0
    """Elements the epilogue operations read and wrote (the forward with the largest ratio to the kernels')."""
    kernel_elements: int = 0
    """Elements the candidate's kernels loaded and stored (per forward, the smallest)."""
    init_ops: list[TorchCall] = Field(default_factory=list)
    """PyTorch compute operations in __init__."""
    copy_kernels: list[str] = Field(default_factory=list)
    """Kernels none of whose stores computed anything (every store was a copy of one load)."""
    extension_torch: list[TorchCall] = Field(default_factory=list)
    """ATen operations an extension called back into while it ran."""


class Observations(BaseModel):
    """What the integrity monitor saw while the candidate ran (see `kope.evaluate.inside.monitor`)."""

    torch_calls: list[TorchCall] = Field(default_factory=list)
    """PyTorch calls outside the allowlist, made by the candidate's Python code (not by its kernels)."""
    downcasts: list[TorchCall] = Field(default_factory=list)
    launches_per_forward: list[int] = Field(default_factory=list)
    kernels: dict[str, int] = Field(default_factory=dict)
    ghost_unchanged: bool | None = None
    """With every launch turned into a no-op, the output was the same: the kernels do not matter."""
    mutated_inputs: list[int] = Field(default_factory=list)
    aliased_outputs: list[str] = Field(default_factory=list)
    output_types: list[str] = Field(default_factory=list)
    """Types of outputs that are not exactly torch.Tensor."""
    threads_alive: int = 0
    threads_in_launch: int = 0
    """The most threads of the candidate alive while one of its kernels ran (one could write what it reads)."""
    children_alive: int = 0
    tampered: list[str] = Field(default_factory=list)
    instrumentation_lost: list[str] = Field(default_factory=list)
    reference_calls: list[TorchCall] = Field(default_factory=list)
    """Calls into the interpreter's internals (frames, gc, imports of inspect, gc...) from the candidate."""
    unwritten_outputs: list[str] = Field(default_factory=list)
    """Outputs none of whose memory was written by the candidate's kernels (interpreter only)."""
    kernel_body_calls: list[TorchCall] = Field(default_factory=list)
    """PyTorch calls the candidate's Python code made from inside a kernel launch."""
    provenance: Provenance | None = None


class AutotuneRun(BaseModel):
    """One config of an autotuned kernel that ran on the CPU interpreter (see kope.evaluate.inside.interpreter)."""

    kernel: str
    config: str
    """The config's meta-parameters, `BLOCK_SIZE=128, num_warps=4`."""
    index: int
    """Its position among the kernel's configs (after `prune_configs_by`)."""
    configs: int
    """How many configs the kernel has."""
    trials: list[int] = Field(default_factory=list)
    """The trials that ran with it."""


class WorkerResult(BaseModel):
    mode: Literal["plan", "reference", "candidate", "shapes"]
    error: WorkerError | None = None
    trials: list[TrialRecord] = Field(default_factory=list)
    plan: PlanInfo | None = None
    precision: Literal["float64", "native"] = "float64"
    timing_ms: float | None = None
    timing_runs: int = 0
    timing_method: Literal["cuda-events", "interpreter-wall", "cpu-wall"] | None = None
    loaded_parameters: list[str] = Field(default_factory=list)
    parameter_pairs: list[tuple[str, str, bool]] = Field(default_factory=list, max_length=100_000)
    """Candidate jobs: the (reference name, candidate name, stored transposed) pairs the state was copied by, one
    tensor on each side (a tensor split into pieces is not among them)."""
    """The candidate's parameters and buffers that got the reference's values (by name, else by the name's words and
    layer index, else by a shape only one tensor on each side has, else transposed: see the worker's
    `_copy_reference_state`)."""
    inputs: ValueMeta | None = None
    """Reference jobs: the structure, dtypes and shapes of the first trial's inputs."""
    input_bytes: int = 0
    output_bytes: int = 0
    reference_ops: list[str] | None = None
    """Reference jobs: the PyTorch compute operations the reference's forward called (None: not traced)."""
    reference_random: str | None = None
    """Reference jobs: the random operation (`dropout` in training mode...) whose draw made two runs of the forward on
    the same inputs and different seeds differ; None when they agree or it draws nothing."""
    reference_init_ops: list[str] = Field(default_factory=list)
    """Reference jobs: the PyTorch compute operations the reference's __init__ called."""
    reference_inputs_read: list[int] | None = None
    """Reference jobs: the inputs (positions) the reference's forward passed to PyTorch operations."""
    device_name: str | None = None
    observations: Observations | None = None
    bounds: list[BoundsEvent] = Field(default_factory=list)
    trace: list[TraceHit] = Field(default_factory=list)
    trace_reached: bool = False
    autotune: list[AutotuneRun] = Field(default_factory=list)
    """Candidate jobs on the CPU interpreter: the autotuned kernels' configs that ran, per trial."""
    shape_probes: list[ShapeProbeResult] = Field(default_factory=list)
    """Shapes jobs: one result per probe, in order (a job cut short reports the probes it finished)."""
    cuda_emulated: list[str] | None = None
    """Candidate jobs under CUDA emulation: what the candidate asked of CUDA (None: no emulation)."""
