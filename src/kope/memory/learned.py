"""Learned patterns: repairs that matched no knowledge-base pattern, kept so retrieval finds them next time.

A learned pattern is written deterministically from what the run measured — the diagnosis features
and code cues of the broken kernel, its error signature, the diff that fixed it and the model's
explanation — never extracted by a model. It is exposed as a `kope.knowledge.schema.Pattern`
with origin `learned`: its symptoms are the features that held (weights summing to 3, so one
learned case does not outweigh a shipped pattern's evidence), its cues the code cues that fired,
its text the explanation and the changed identifiers, so `retrieval.rank` scores it like any other.
The same fix learned twice keeps one pattern (its id names the identifiers the fix changed and ends in a
hash of the diff) and gains evidence.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from kope.knowledge.base import KnowledgeBase
from kope.knowledge.schema import CodeCue, Pattern, Symptom
from kope.memory.records import LearnedRecord
from kope.memory.store import ExperienceStore

ORIGIN = "learned"
SYMPTOM_WEIGHT = 3.0
CUE_WEIGHT = 1.0
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_COMMON = frozenset(
    {
        "tl",
        "the",
        "and",
        "for",
        "self",
        "return",
        "import",
        "torch",
        "triton",
        "def",
        "mask",
        "other",
        "dtype",
        "constexpr",
        "program_id",
        "arange",
        "load",
        "store",
        "none",
        "true",
        "false",
    }
)
_SKIP_FEATURES = frozenset({"status"})


def unified_diff(before: str, after: str, context: int = 2) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", n=context, lineterm="")
    return "\n".join(lines)


def _digest(diff: str) -> str:
    """A hash of the diff's changed lines (whitespace aside): equal fixes, equal digest."""
    changed = [
        line[1:].strip()
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
    ]
    return hashlib.sha256("\n".join(changed).encode()).hexdigest()


def pattern_id_for(diff: str) -> str:
    """A readable id from what the fix changed, and a hash of its changed lines: `learned-<the identifiers
    it changed>-<hash>`, e.g. `learned-offsets-n-elements-4bf7c7`. The same fix gives the same id."""
    words = [re.sub(r"[^a-z0-9]+", "-", w.lower()).strip("-") for w in keywords_of(diff, "", limit=2)]
    return "-".join(["learned", *(w for w in words if w), _digest(diff)[:6]])


def legacy_pattern_id(diff: str) -> str:
    """The id stores written before readable ids gave the same fix (`learned-` and ten hex digits)."""
    return "learned-" + _digest(diff)[:10]


def keywords_of(diff: str, explanation: str, limit: int = 12) -> list[str]:
    """Identifiers the fix changed, then words of the explanation, most frequent first."""
    changed = " ".join(
        line[1:] for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )
    counts: Counter[str] = Counter()
    for word in _IDENT.findall(changed):
        if word.lower() not in _COMMON:
            counts[word] += 2
    for word in _IDENT.findall(explanation):
        if word.lower() not in _COMMON and len(word) > 3:
            counts[word.lower()] += 1
    return [word for word, _ in counts.most_common(limit)]


def symptoms_of(features: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Symptom specs for the features that held: true booleans, and the error kind when there is one."""
    held: list[dict[str, Any]] = []
    for name, value in sorted(features.items()):
        if name in _SKIP_FEATURES:
            continue
        if value is True:
            held.append({"feature": name, "op": "true"})
        elif name == "error_kind" and isinstance(value, str) and value:
            held.append({"feature": name, "op": "==", "value": value})
    return held


def learn(
    store: ExperienceStore,
    *,
    task_id: int,
    family: str,
    before: str,
    after: str,
    explanation: str,
    features: Mapping[str, Any],
    cues: Sequence[str],
    error_signature: str | None,
    source_version: int | None,
    fixed_version: int | None,
) -> tuple[LearnedRecord, bool]:
    """Store the repair as a learned pattern (or find the one with the same fix); (record, whether new)."""
    diff = unified_diff(before, after)
    legacy = legacy_pattern_id(diff)
    known = next((r for r in store.learned(10_000) if r.pattern_id == legacy), None)
    if known is not None:  # learned before ids were readable: the same pattern gains the evidence
        return known, False
    sentence = re.split(r"(?<=[.!?])\s", explanation.strip(), maxsplit=1)[0] if explanation.strip() else ""
    title = (sentence or "A repair that matched no known pattern")[:120]
    return store.add_learned(
        {
            "pattern_id": pattern_id_for(diff),
            "task_id": task_id,
            "family": family,
            "error_signature": error_signature,
            "title": title,
            "explanation": explanation.strip() or title,
            "diff": diff,
            "keywords": keywords_of(diff, explanation),
            "features": {s["feature"]: s.get("value", True) for s in symptoms_of(features)},
            "cues": sorted(set(cues)),
            "source_version": source_version,
            "fixed_version": fixed_version,
        }
    )


def as_pattern(record: LearnedRecord) -> Pattern:
    """A learned record as a knowledge-base pattern (origin `learned`)."""
    from kope.bugs.cue import CUES
    from kope.knowledge.features import FEATURES

    specs = [
        {"feature": name, "op": "true"} if value is True else {"feature": name, "op": "==", "value": value}
        for name, value in record.features.items()
        if name in FEATURES
    ]
    weight = SYMPTOM_WEIGHT / len(specs) if specs else 0.0
    symptoms = [
        Symptom(weight=round(weight, 3), note=f"as in a repair learned from a {record.family} kernel", **spec)
        for spec in specs
    ]
    cues = [c for c in record.cues if c in CUES]
    code_cues = [CodeCue(cue=c, weight=round(CUE_WEIGHT / len(cues), 3)) for c in cues]
    diff = record.diff if len(record.diff) <= 1500 else record.diff[:1500] + "\n…"
    return Pattern(
        id=record.pattern_id,
        title=record.title,
        summary=f"Learned from a repair of a {record.family} kernel: {record.title}",
        keywords=list(record.keywords),
        symptoms=symptoms,
        code_cues=code_cues,
        explanation=record.explanation,
        fix=f"The change that fixed it:\n{diff}",
        origin=ORIGIN,
    )


def learned_patterns(store: ExperienceStore, limit: int = 500) -> list[Pattern]:
    return [as_pattern(record) for record in store.learned(limit)]


def with_learned(base: KnowledgeBase, store: ExperienceStore) -> KnowledgeBase:
    """A copy of `base` with the store's learned patterns added (shipped and user patterns win on id clashes)."""
    return KnowledgeBase(base.patterns.values()).extend(learned_patterns(store))
