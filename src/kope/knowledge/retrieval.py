"""Rank the knowledge base's patterns for a diagnosis.

score = Σ weights of the symptoms that hold (over the diagnosis features)
      + Σ weights of the code cues found in the kernel
      + LEXICAL_WEIGHT × (BM25 of the pattern's text against the diagnosis text, scaled to [0, 1])

Each hypothesis carries the evidence that supports it: the symptoms that held (with the measured
values), the cue hits (with line and source), and whether the text matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from kope.bugs.cue import CueHit
from kope.bugs.registry import edits_named
from kope.knowledge.base import KnowledgeBase
from kope.knowledge.features import FEATURES, Features

LEXICAL_WEIGHT = 1.0


class Hypothesis(BaseModel):
    pattern: str
    score: float
    title: str = ""
    evidence: list[str] = Field(default_factory=list)
    fix: str = ""
    recipe: str | None = None
    edits: list[str] = Field(default_factory=list)
    """The repair operators the pattern points at (its `edits`, kinds expanded; kope.bugs.registry.edits_named)."""

    @model_serializer(mode="wrap")
    def _without_empty_edits(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`edits` only when a pattern names some: a shipped pattern's hypothesis serialises as before."""
        data: dict[str, Any] = handler(self)
        if not self.edits:
            data.pop("edits", None)
        return data


def rank(
    base: KnowledgeBase,
    features: Features,
    cue_hits: Sequence[CueHit],
    text: str = "",
    limit: int = 5,
) -> list[Hypothesis]:
    lexical = {pattern.id: score for pattern, score in base.search(text, limit=len(base))} if text else {}
    top_lexical = max(lexical.values(), default=0.0) or 1.0
    hits_by_cue: dict[str, list[CueHit]] = {}
    for hit in cue_hits:
        hits_by_cue.setdefault(hit.cue, []).append(hit)
    measured = features.measured()
    ranked: list[Hypothesis] = []
    for pattern in base.patterns.values():
        score = 0.0
        evidence: list[str] = []
        for symptom in pattern.symptoms:
            if symptom.holds(measured):
                score += symptom.weight
                if symptom.weight > 0:
                    value = measured.get(symptom.feature)
                    note = symptom.note or FEATURES.get(symptom.feature, symptom.feature)
                    shown = "" if isinstance(value, bool) else f" ({symptom.feature} = {_show(value)})"
                    evidence.append(f"{note}{shown}")
        for code_cue in pattern.code_cues:
            hits = hits_by_cue.get(code_cue.cue, [])
            if hits:
                score += code_cue.weight
                where = "; ".join(f"line {h.line}: {h.text}" for h in hits[:3])
                evidence.append(f"code: {code_cue.cue} at {where}")
        if pattern.id in lexical and lexical[pattern.id] > 0:
            share = lexical[pattern.id] / top_lexical
            score += LEXICAL_WEIGHT * share
            if share > 0.5:
                evidence.append("the diagnosis text matches the pattern's description")
        if score > 0:
            ranked.append(
                Hypothesis(
                    pattern=pattern.id,
                    score=round(score, 3),
                    title=pattern.title,
                    evidence=evidence,
                    fix=pattern.fix.strip(),
                    recipe=pattern.recipe.name if pattern.recipe else None,
                    edits=edits_named(pattern.edits),
                )
            )
    ranked.sort(key=lambda h: (-h.score, h.pattern))
    return ranked[:limit]


def _show(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
