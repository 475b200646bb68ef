"""What a derivation of cases found (`kope.cases.derive`): the size parameters, every case tried and
whether it was kept, and why none fits when none does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from kope.protocol.inputs import InputTransform
from kope.protocol.results import LowSignal

Kind = Literal["original", "shrunk", "odd", "prime", "one", "alone", "scaled", "shifted", "widened"]


class SizeParameter(BaseModel):
    """A root size parameter of the task and whether derivation varies it."""

    name: str
    value: int | list[int]
    sizes_inputs: bool
    reason: str


class DerivedCase(BaseModel):
    """A variant derivation considered: kept (a case) or dropped, and why."""

    name: str
    kind: Kind
    overrides: dict[str, Any] = Field(default_factory=dict)
    inputs: InputTransform | None = None
    kept: bool = False
    visible: bool = False
    reason: str = ""
    numel: int | None = None
    """Elements of all input tensors."""
    output_numel: int | None = None

    def case_dict(self, *, named: bool = True) -> dict[str, Any]:
        """The case as `build_cases` takes it."""
        data: dict[str, Any] = dict(self.overrides)
        if named:
            data["name"] = self.name
        data["visible"] = self.visible
        if self.inputs is not None:
            data["inputs"] = self.inputs.model_dump()
        return data


class TooLarge(BaseModel):
    """No case fits: what was tried, and what would make one fit."""

    message: str
    tried: list[dict[str, Any]] = Field(default_factory=list)
    """The sizes tried (overrides), with the elements and estimated bytes of each."""
    fixes: list[str] = Field(default_factory=list)
    """Command-line options that would make a case fit (`--max-elements N`, `--set NAME=V`, `--memory MB`)."""

    def text(self) -> str:
        return self.message + ("; would fit with " + " or ".join(self.fixes) if self.fixes else "")


class Derivation(BaseModel):
    """What derivation found for one task, device and budget."""

    task: str
    device: str
    max_elements: int
    probe: Literal["meta", "small", "none"] = "none"
    """How input shapes were probed: the meta device at the original sizes, or real tensors at small sizes."""
    parameters: list[SizeParameter] = Field(default_factory=list)
    original_numel: int | None = None
    """Elements of the inputs at the task's own sizes."""
    original_output_numel: int | None = None
    """Elements of the outputs at the task's own sizes, where the meta device could run the reference."""
    original_estimated: bool = False
    """True when `original_numel` comes from the fitted dimensions rather than from the original shapes."""
    candidates: list[DerivedCase] = Field(default_factory=list)
    jobs: int = 0
    seconds: float = 0.0
    error: str | None = None
    """Why no case could be derived (the evaluator then uses the task's own sizes as one case, unless
    they are over the budget: see `too_large`)."""
    memory_mb: int | None = None
    """The memory limit of the jobs the cases run in, which every case's estimate must fit."""
    original_bytes: int | None = None
    """Estimated memory of the task's own sizes: inputs, outputs, parameters and the reference's
    float64 copies (`BYTES_PER_ELEMENT` each), where the meta device gave them."""
    notes: list[str] = Field(default_factory=list)
    """What a user should know about the cases (only the batch could be varied, say)."""
    too_large: TooLarge | None = None
    """Set when no case fits: the evaluator then fails before running anything (error kind `too-large`)."""
    low_signal: LowSignal | None = None
    """Set when, on the base case's inputs, the reference's output equals an input, is constant or is near
    zero: the reason, and the cases derived from a widened input distribution (none when no widening helped)."""

    @property
    def kept(self) -> list[DerivedCase]:
        return [c for c in self.candidates if c.kept]

    def case_dicts(self, *, named: bool = True) -> list[dict[str, Any]]:
        kept = self.kept
        if not kept:
            return [{}]
        return [c.case_dict(named=named) for c in kept]


def distinct_shapes(cases: Iterable[DerivedCase]) -> int:
    """How many kept cases differ in their sizes (input transforms aside)."""
    return len({tuple(sorted((k, str(v)) for k, v in c.overrides.items())) for c in cases if c.kept})
