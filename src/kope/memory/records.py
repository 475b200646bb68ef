"""The experience store's typed records: what its reads return and its writes take (`kope.memory.store`)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field

from kope.protocol.results import EvalResult

EdgeKind = Literal["derived_from", "alternative_of", "used_evidence", "fixed_by"]
EDGE_KINDS: tuple[str, ...] = ("derived_from", "alternative_of", "used_evidence", "fixed_by")


class TaskRecord(BaseModel):
    id: int
    hash: str
    name: str
    family: str
    signature: str
    path: str
    created: float


class RunRecord(BaseModel):
    id: int
    kind: str
    task_id: int
    model: str
    device: str
    toolchain: str
    started: float
    finished: float | None = None
    status: str | None = None
    stop_reason: str | None = None
    tokens_prompt: int = 0
    tokens_completion: int = 0
    start_version: int | None = None
    best_version: int | None = None
    summary: dict[str, Any] | None = None


class VersionRecord(BaseModel):
    id: int
    task_id: int
    hash: str
    norm_hash: str
    source: str
    created: float


class DecisionRecord(BaseModel):
    id: int
    run_id: int
    parent_id: int | None
    child_id: int
    kind: str
    text: str
    diff: str
    params: dict[str, Any] | None = None
    prompt_id: str | None = None
    tokens_prompt: int = 0
    tokens_completion: int = 0
    created: float


class EvaluationRecord(BaseModel):
    id: int
    version_id: int
    run_id: int | None
    scope: str
    status: str
    correct: bool
    cases_passed: int
    cases_total: int
    error_kind: str | None = None
    error_message: str | None = None
    error_signature: str | None = None
    integrity: str
    time_ms: float | None = None
    reference_ms: float | None = None
    timing_method: str | None = None
    speedup: float | None = None
    device: str
    toolchain: str
    created: float


class EdgeRecord(BaseModel):
    id: int
    kind: str
    src: int
    dst: int | None = None
    ref: str | None = None
    decision_id: int | None = None
    run_id: int | None = None
    created: float


class PatternStats(BaseModel):
    pattern: str
    applied: int
    fixed: int

    @property
    def rate(self) -> float:
        """Beta-smoothed fix rate, (fixed + 1) / (applied + 2)."""
        return (self.fixed + 1) / (self.applied + 2)


class LearnedRecord(BaseModel):
    id: int
    pattern_id: str
    task_id: int
    family: str
    error_signature: str | None = None
    title: str
    explanation: str
    diff: str
    keywords: list[str] = Field(default_factory=list)
    features: dict[str, Any] = Field(default_factory=dict)
    cues: list[str] = Field(default_factory=list)
    source_version: int | None = None
    fixed_version: int | None = None
    created: float


class InjectionRecord(BaseModel):
    id: int
    prompt_id: str
    run_id: int | None = None
    version_id: int | None = None
    item: str
    section: str
    level: int
    tokens: int
    rank: int
    score: float
    relevance: float
    utility: float
    recency: float
    redundancy: float
    produced_version: int | None = None
    outcome: str | None = None
    created: float


class DecisionIn(BaseModel):
    """A decision to record: what changed (kind, text, diff, params) and what it cost."""

    kind: str
    text: str = ""
    diff: str = ""
    params: dict[str, Any] | None = None
    prompt_id: str | None = None
    tokens_prompt: int = 0
    tokens_completion: int = 0


class Injected(BaseModel):
    """One item the context packer put into a prompt."""

    item: str
    section: str
    level: int
    tokens: int
    rank: int
    score: float
    relevance: float = 0.0
    utility: float = 0.0
    recency: float = 0.0
    redundancy: float = 0.0


class StepRecord(BaseModel):
    version: VersionRecord
    new: bool
    """False when this source was already stored for the task (deduplicated)."""
    decision_id: int | None = None
    evaluation: EvaluationRecord | None = None


class ExperienceRow(BaseModel):
    """A decision with its outcome and context: what the context packer ranks."""

    decision_id: int
    run_id: int
    task_id: int
    task_name: str
    family: str
    signature: str
    kind: str
    text: str
    diff: str
    params: dict[str, Any] | None = None
    parent_id: int | None
    child_id: int
    status: str | None = None
    correct: bool | None = None
    error_signature: str | None = None
    error_kind: str | None = None
    time_ms: float | None = None
    parent_time_ms: float | None = None
    timing_method: str | None = None
    device: str | None = None
    created: float

    @property
    def speedup(self) -> float | None:
        """Parent time over child time, same run and method (None when either is unknown)."""
        if self.time_ms and self.parent_time_ms and self.correct:
            return self.parent_time_ms / self.time_ms
        return None


class StoreStats(BaseModel):
    url: str
    schema_version: int
    tasks: int
    runs: int
    versions: int
    decisions: int
    evaluations: int
    edges: dict[str, int]
    error_signatures: int
    pattern_evidence: int
    learned_patterns: int
    injections: int
    runs_by_kind: dict[str, int]
    top_patterns: list[dict[str, Any]] = Field(default_factory=list)


def evaluation_values(result: EvalResult) -> dict[str, Any]:
    """The columns of an evaluation row that come from the evaluator's result."""
    timings = [c.timing for c in result.cases]
    timed = all(t is not None for t in timings) and bool(timings)
    time_ms = sum(t.candidate_ms for t in timings if t is not None) if timed else None
    references = [t.reference_ms for t in timings if t is not None]
    reference_ms = sum(r for r in references if r) if timed and all(references) else None
    method = timings[0].method if timed and timings[0] is not None else None
    speedup = None
    if method == "cuda-events" and time_ms and reference_ms:
        speedup = reference_ms / time_ms
    return {
        "status": result.status,
        "correct": result.status == "pass",
        "cases_passed": sum(c.passed for c in result.cases),
        "cases_total": len(result.cases),
        "error_kind": result.error.kind if result.error else None,
        "error_message": result.error.message[:2000] if result.error else None,
        "integrity": result.integrity.verdict,
        "time_ms": time_ms if time_ms is None or math.isfinite(time_ms) else None,
        "reference_ms": reference_ms,
        "timing_method": method,
        "speedup": speedup,
    }
