"""What a diagnosis is: its cases, probes, features and ranked hypotheses (what `kope diagnose --json` prints).

kope.diagnose.diagnoser makes one; kope.diagnose.extract measures its features.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kope.bugs.cue import CueHit
from kope.diagnose.signature import OutputSignature
from kope.knowledge.features import Features
from kope.knowledge.retrieval import Hypothesis
from kope.protocol import BoundsEvent
from kope.protocol.results import EvalResult


class CaseDiagnosis(BaseModel):
    name: str
    visible: bool
    overrides: dict[str, Any]
    passed: bool
    error_kind: str | None = None
    signature: OutputSignature | None = None
    output: int | None = None
    """Which output (in flattening order) the signature describes."""
    trial: int | None = None


class Probe(BaseModel):
    name: str
    passed: bool | None
    detail: str


class Diagnosis(BaseModel):
    """What `kope diagnose --json` prints: `hypotheses` and `signature` (the features) are the contract."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    status: str
    task: str
    candidate: str
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    later_hypotheses: list[Hypothesis] = Field(default_factory=list)
    """The patterns ranked after `hypotheses` (the first five): not shown nor prompted, but the repair search orders
    its operators by them too, so that a bug ranked sixth is tried before one no evidence points to."""
    features: Features = Field(default_factory=Features, alias="signature")
    """The measured features (JSON key `signature`, as in the contract)."""
    cases: list[CaseDiagnosis] = Field(default_factory=list)
    probes: list[Probe] = Field(default_factory=list)
    bounds: list[BoundsEvent] = Field(default_factory=list)
    cues: list[CueHit] = Field(default_factory=list)
    blocks: list[int] = Field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    evaluation: EvalResult | None = None
    """The evaluation the diagnosis started from."""
    fails_elsewhere: bool = False
    """Right on the given cases, but known to fail on others (hidden ones): the caller said so."""

    def summary(self) -> str:
        """A few lines of evidence, for prompts and reports."""
        lines = [f"status: {self.status}"]
        if self.error:
            lines.append(f"error: {self.error}")
        for case in self.cases:
            if not case.passed:
                sig = case.signature
                what = case.error_kind or (
                    f"{sig.mismatch_count}/{sig.numel} wrong, max abs err {sig.max_abs_err:.3g}, "
                    f"structure: {', '.join(sig.structure) or 'scattered'}"
                    + (f", wrong where {sig.region}" if sig.region else "")
                    if sig
                    else "wrong"
                )
                lines.append(f"case {case.name}{' (shown)' if case.visible else ''}: {what}")
        lines += [f"probe {p.name}: {p.detail}" for p in self.probes]
        lines += [
            f"out of bounds: {b.kind} in {b.kernel} line {b.line}, program {tuple(b.pid)}, "
            f"{b.elements_out} elements {b.nearest}"
            for b in self.bounds
        ]
        return "\n".join(lines)
