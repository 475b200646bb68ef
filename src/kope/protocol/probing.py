"""What a `shapes` job is asked and what it answers (see `kope.cases.derive` and `kope.evaluate.inside.shapes`).

A shapes job executes a task under several sets of overrides and reports, for each, the shapes and
dtypes of the inputs `get_inputs()` makes (built on PyTorch's meta device, so no data is allocated
whatever the sizes), and, where asked, whether the reference runs on real inputs of those sizes and
gives finite outputs. Meta probes may also build the reference `Model` and run it on the meta
device, which gives the output shapes the same way.
"""

from __future__ import annotations

from pydantic import BaseModel


class ShapeProbe(BaseModel):
    """One variant of a task that a shapes job looks at."""

    source: str
    """The task's source with the variant's overrides applied."""
    meta: bool = True
    """Build the inputs on PyTorch's meta device: shapes and dtypes without allocating any data."""
    outputs: bool = False
    """Meta probes: also build the model and run it on the meta device, for the output shapes."""
    reference: bool = False
    """Also build the inputs for real, run the reference on them and say whether its outputs are finite."""
    max_elements: int | None = None
    """Do not run the reference when the inputs hold more elements than this."""
    input_scale: float = 1.0
    input_shift: float = 0.0
    input_pattern: str | None = None


class ProbedInput(BaseModel):
    """An input or output value: a tensor's shape and dtype, or the type of anything else."""

    type: str
    """`tensor`, or the Python type name of a value that is not a tensor."""
    shape: list[int] | None = None
    dtype: str | None = None


class OutputSignal(BaseModel):
    """How much a floating-point output of the reference says about a kernel, on the probe's inputs:
    whether it equals an input, is constant or is near zero (then a copy or a constant kernel matches it)."""

    output: int
    """The output's index among the flattened outputs."""
    dtype: str
    numel: int
    max_abs: float
    spread: float
    """The largest value minus the smallest."""
    input_error: float | None = None
    """The smallest max |output - input| over the floating-point inputs of the output's shape (None: none)."""
    input_index: int | None = None
    """That input's index."""


class ShapeProbeResult(BaseModel):
    inputs: list[ProbedInput] | None = None
    numel: int | None = None
    """Elements of all input tensors together."""
    outputs: list[ProbedInput] | None = None
    """The reference's outputs, flattened (from the meta device, or from the real run)."""
    output_error: str | None = None
    """Why the meta device could not give the outputs."""
    ran: bool = False
    """The reference ran on real inputs."""
    finite: bool | None = None
    """Every floating-point output element of the reference is finite."""
    output_numel: int | None = None
    param_numel: int | None = None
    """Elements of the reference model's parameters and buffers (meta device, or the real run)."""
    signal: list[OutputSignal] | None = None
    """For each finite floating-point output of the real run: how it compares with the inputs."""
    seconds: float = 0.0
    error: str | None = None
    """Why the probe failed: the stage and the exception."""
    skipped: str | None = None
    """Why the reference was not run (over the element budget, out of time)."""
