"""Active context management: choose the experience worth its tokens, and fit it to the budget exactly.

Candidates come from four sources, each a prompt section:

    patterns      knowledge-base and learned patterns, with how often each fixed a kernel
    lineage       the decisions that led to the current version in this run, and their outcomes
    siblings      alternatives already tried from the current version (failed or slower)
    other-tasks   decisions on other tasks, and the best launch configurations found for them

Each item is scored

    score = w_rel · relevance + w_util · utility + w_rec · recency − w_red · redundancy

- relevance: same operator family, same task or shape/dtype signature, same device, same error
  signature, and lexical similarity (TF-IDF cosine) between the item and the current problem;
  items of this run's lineage are relevant by construction, less so the further back they are;
- utility: for patterns the Beta-smoothed fix rate (fixed + 1) / (applied + 2); for a decision its
  outcome — a measured speedup (log scale, discounted when measured on another device), a repair, a
  failure (worth a warning in the lineage and among siblings, little elsewhere);
- recency: exponential decay with a half-life in days;
- redundancy: similarity to the items already chosen (maximal marginal relevance), so ten copies
  of the same lesson cost one.

Items are rendered at three levels (full: with the diff; summary; one line) and handed to
`kope.context.budget.pack` as optional sections in score order, so the prompt's budget is enforced
in one place and never exceeded (exact token count). The optimize prompt packs breadth first (every
item that fits as one line, then the best enriched in score order). What was injected is logged.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kope.context.budget import Packed, Section, pack
from kope.memory.records import ExperienceRow, Injected
from kope.memory.store import ExperienceStore
from kope.models.tokens import count

SectionName = Literal["patterns", "lineage", "siblings", "other-tasks"]
TITLES: dict[str, str] = {
    "patterns": "Experience: bug patterns and how often they fixed kernels",
    "lineage": "Experience: how the current kernel got here",
    "siblings": "Experience: alternatives already tried from the current kernel",
    "other-tasks": "Experience from earlier runs",
}
ORDER: tuple[str, ...] = ("patterns", "lineage", "siblings", "other-tasks")
PREFIX = "exp:"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


@dataclass(frozen=True)
class Query:
    """What the current prompt is about."""

    purpose: Literal["repair", "optimize"]
    family: str
    signature: str
    device: str
    task_id: int | None = None
    run_id: int | None = None
    version_id: int | None = None
    error_signature: str | None = None
    text: str = ""
    patterns: Sequence[str] = ()
    """Pattern ids the diagnosis ranked (repair)."""


@dataclass
class Item:
    key: str
    section: str
    levels: tuple[str, str, str]
    """Full, summary, one line."""
    text: str
    family: str | None = None
    signature: str | None = None
    device: str | None = None
    error_signature: str | None = None
    task_id: int | None = None
    applied: int = 0
    fixed: int = 0
    speedup: float | None = None
    outcome: Literal["faster", "slower", "fixed", "failed", "correct", "unknown"] = "unknown"
    created: float = 0.0
    distance: int | None = None
    """Steps back along the current lineage (lineage items)."""
    version: int | None = None
    """The version this item's evidence produced, for `used_evidence` edges."""


@dataclass
class Scored:
    item: Item
    relevance: float
    utility: float
    recency: float
    redundancy: float = 0.0
    score: float = 0.0
    rank: int = 0


@dataclass(frozen=True)
class Weights:
    relevance: float = 0.5
    utility: float = 0.3
    recency: float = 0.1
    redundancy: float = 0.35
    half_life_days: float = 14.0
    cross_device: float = 0.5
    """Weight of a speedup measured on another device (log scale)."""


@dataclass(frozen=True)
class Caps:
    """Most items per section (the token budget is the hard limit; caps keep the candidate list short)."""

    patterns: int = 6
    lineage: int = 8
    siblings: int = 8
    other_tasks: int = 12

    def of(self, section: str) -> int:
        return int(getattr(self, section.replace("-", "_")))


@dataclass
class Prepared:
    """Experience sections for one prompt, with the scores needed to log what was injected."""

    prompt_id: str
    query: Query
    sections: list[Section]
    scored: dict[str, Scored] = field(default_factory=dict)
    candidates: int = 0


class ExperiencePacker:
    def __init__(
        self,
        store: ExperienceStore,
        *,
        weights: Weights | None = None,
        caps: Caps | None = None,
        pattern_text: Callable[[str], str] | None = None,
    ) -> None:
        self.store = store
        self.weights = weights or Weights()
        self.caps = caps or Caps()
        self.pattern_text = pattern_text or (lambda pattern_id: "")

    # -- candidates ------------------------------------------------------------------------

    def items(self, query: Query) -> list[Item]:
        found: list[Item] = []
        if query.run_id is not None and query.version_id is not None:
            found += self._lineage_and_siblings(query)
        found += self._other_tasks(query)
        found += self._patterns(query)
        return found

    def _lineage_and_siblings(self, query: Query) -> list[Item]:
        assert query.run_id is not None and query.version_id is not None
        rows = self.store.experience(run_id=query.run_id, limit=200)
        ancestors = [query.version_id, *self.store.lineage(query.version_id, query.run_id)]
        depth = {vid: index for index, vid in enumerate(ancestors)}
        items = []
        for row in rows:
            if row.child_id in depth and row.child_id != row.parent_id:
                item = _decision_item(row, "lineage", query)
                item.distance = depth[row.child_id]
                items.append(item)
            elif row.parent_id == query.version_id:
                items.append(_decision_item(row, "siblings", query))
        return items

    def _other_tasks(self, query: Query) -> list[Item]:
        rows = self.store.experience(exclude_run=query.run_id, limit=400)
        items = [_decision_item(row, "other-tasks", query) for row in rows if row.status is not None]
        if query.purpose == "optimize":
            for config in self.store.best_configs(query.device, exclude_task=query.task_id, limit=10):
                settings = ", ".join(f"{k}={v}" for k, v in sorted(config["config"].items()))
                line = (
                    f"[{config['task']}, {config['family']}] fastest launch configuration: {settings} "
                    f"({config['speedup']:.2f}x over its start on {query.device})"
                )
                items.append(
                    Item(
                        key=f"config:{config['run_id']}",
                        section="other-tasks",
                        levels=(line, line, line),
                        text=line,
                        family=config["family"],
                        device=query.device,
                        task_id=config["task_id"],
                        speedup=config["speedup"],
                        outcome="faster",
                    )
                )
        return items

    def _patterns(self, query: Query) -> list[Item]:
        if query.purpose != "repair":
            return []
        items: list[Item] = []
        learned_patterns = self.store.learned(limit=200)
        learned_ids = {p.pattern_id for p in learned_patterns}
        stats = self.store.pattern_stats(query.patterns) if query.patterns else {}
        for pattern_id in query.patterns:
            found = stats.get(pattern_id)
            if found is None or pattern_id in learned_ids:
                continue
            line = (
                f"{pattern_id}: applied {found.applied} time(s) in earlier repairs, fixed the kernel "
                f"{found.fixed} time(s) (smoothed rate {found.rate:.2f})"
            )
            detail = self.pattern_text(pattern_id)
            items.append(
                Item(
                    key=f"pattern:{pattern_id}",
                    section="patterns",
                    levels=(f"{line}\n{detail}".strip(), line, line),
                    text=f"{pattern_id} {detail}",
                    applied=found.applied,
                    fixed=found.fixed,
                    outcome="fixed" if found.fixed else "failed",
                )
            )
        learned_stats = self.store.pattern_stats([p.pattern_id for p in learned_patterns])
        for learned in learned_patterns:
            stats_of = learned_stats.get(learned.pattern_id)
            applied, fixed = (stats_of.applied, stats_of.fixed) if stats_of else (1, 1)
            line = f"{learned.pattern_id} (learned from a repair of a {learned.family} kernel): {learned.title}"
            summary = f"{line}\n{_clip(learned.explanation, 400)}"
            full = f"{summary}\nThe fix:\n```diff\n{_clip(learned.diff, 1500)}\n```"
            items.append(
                Item(
                    key=f"learned:{learned.pattern_id}",
                    section="patterns",
                    levels=(full, summary, line),
                    text=f"{learned.title} {learned.explanation} {' '.join(learned.keywords)}",
                    family=learned.family,
                    error_signature=learned.error_signature,
                    task_id=learned.task_id,
                    applied=applied,
                    fixed=fixed,
                    outcome="fixed",
                    created=learned.created,
                    version=learned.fixed_version,
                )
            )
        return items

    # -- scoring ---------------------------------------------------------------------------

    def rank(self, query: Query, items: Sequence[Item], now: float | None = None) -> list[Scored]:
        """Score every item and order them by maximal marginal relevance, best first."""
        now = time.time() if now is None else now
        vectors = _tfidf([query.text] + [item.text for item in items])
        query_vector, item_vectors = vectors[0], vectors[1:]
        scored = [
            Scored(
                item=item,
                relevance=self._relevance(query, item, _cosine(query_vector, vector)),
                utility=self._utility(query, item),
                recency=self._recency(item, now),
            )
            for item, vector in zip(items, item_vectors, strict=True)
        ]
        weights = self.weights
        for entry in scored:
            entry.score = (
                weights.relevance * entry.relevance + weights.utility * entry.utility + weights.recency * entry.recency
            )
        shortlist: list[Scored] = []
        for name in ORDER:
            in_section = sorted((e for e in scored if e.item.section == name), key=lambda e: -e.score)
            shortlist += in_section[: 4 * self.caps.of(name)]
        scored = shortlist
        tokens = [set(_WORD.findall(entry.item.levels[2].lower())) for entry in scored]
        remaining = list(range(len(scored)))
        chosen: list[int] = []
        per_section: Counter[str] = Counter()
        while remaining:
            best, best_value, best_redundancy = -1, -math.inf, 0.0
            for index in remaining:
                redundancy = max((_jaccard(tokens[index], tokens[other]) for other in chosen), default=0.0)
                value = scored[index].score - weights.redundancy * redundancy
                if value > best_value:
                    best, best_value, best_redundancy = index, value, redundancy
            remaining.remove(best)
            entry = scored[best]
            if per_section[entry.item.section] >= self.caps.of(entry.item.section):
                continue
            per_section[entry.item.section] += 1
            entry.redundancy = best_redundancy
            entry.score = best_value
            entry.rank = len(chosen) + 1
            chosen.append(best)
        return [scored[index] for index in chosen]

    def _relevance(self, query: Query, item: Item, lexical: float) -> float:
        if item.section == "lineage":
            return max(0.3, 1.0 - 0.1 * (item.distance or 0))
        if item.section == "siblings":
            return 1.0
        value = 0.0
        if item.family is not None and item.family == query.family:
            value += 0.3
        if item.task_id is not None and item.task_id == query.task_id:
            value += 0.2
        elif item.signature is not None and item.signature == query.signature:
            value += 0.1
        if item.device is not None and item.device == query.device:
            value += 0.15
        if item.error_signature is not None and item.error_signature == query.error_signature:
            value += 0.2
        if item.section == "patterns" and item.key.startswith("pattern:"):
            value += 0.35
        return min(1.0, value + 0.15 * lexical)

    def _utility(self, query: Query, item: Item) -> float:
        if item.section == "patterns":
            return (item.fixed + 1) / (item.applied + 2)
        if item.speedup is not None and item.speedup > 0:
            gain = math.log(item.speedup)
            if item.device is not None and item.device != query.device:
                gain *= self.weights.cross_device
            return 0.5 + 0.5 * math.tanh(4.0 * gain)
        if item.outcome == "fixed":
            return 0.9
        if item.outcome == "failed":
            return 0.5 if item.section in ("lineage", "siblings") else 0.2
        return 0.4

    def _recency(self, item: Item, now: float) -> float:
        if not item.created:
            return 1.0
        age_days = max(0.0, now - item.created) / 86400.0
        return 0.5 ** (age_days / self.weights.half_life_days)

    # -- sections and packing --------------------------------------------------------------

    def prepare(self, query: Query, *, base_priority: float = 20.0, span: float = 15.0) -> Prepared:
        """The experience as optional prompt sections, priorities in score order (below the task's own parts)."""
        candidates = self.items(query)
        ranked = self.rank(query, candidates)
        prepared = Prepared(prompt_id=uuid.uuid4().hex[:16], query=query, sections=[], candidates=len(candidates))
        total = max(len(ranked), 1)
        by_section: dict[str, list[Scored]] = {name: [] for name in ORDER}
        for entry in ranked:
            by_section[entry.item.section].append(entry)
        for name in ORDER:
            for entry in by_section[name]:
                section_name = PREFIX + entry.item.key
                levels = (*entry.item.levels, "")
                prepared.sections.append(
                    Section(
                        section_name,
                        TITLES[name],
                        levels,
                        priority=base_priority + span * (1 - (entry.rank - 1) / total),
                    )
                )
                prepared.scored[section_name] = entry
        return prepared

    def injected(self, prepared: Prepared, packed: Packed) -> list[Injected]:
        """What of the prepared experience made it into the packed prompt, and at which level."""
        found: list[Injected] = []
        texts = {section.name: text for section, text in packed.sections}
        for choice in packed.choices:
            entry = prepared.scored.get(choice.name)
            if entry is None or choice.level is None or choice.name not in texts:
                continue
            found.append(
                Injected(
                    item=entry.item.key,
                    section=entry.item.section,
                    level=choice.level,
                    tokens=count(texts[choice.name]),
                    rank=entry.rank,
                    score=round(entry.score, 4),
                    relevance=round(entry.relevance, 4),
                    utility=round(entry.utility, 4),
                    recency=round(entry.recency, 4),
                    redundancy=round(entry.redundancy, 4),
                )
            )
        return found

    def log(self, prepared: Prepared, packed: Packed) -> list[Injected]:
        """Record the injected items in the store under the prompt's id; returns them."""
        items = self.injected(prepared, packed)
        self.store.log_injections(
            prepared.prompt_id, items, run_id=prepared.query.run_id, version_id=prepared.query.version_id
        )
        return items

    def evidence(self, prepared: Prepared, items: Sequence[Injected]) -> dict[str, int | None]:
        """`used_evidence` targets of injected items: item key → the version its evidence produced."""
        by_key = {entry.item.key: entry.item for entry in prepared.scored.values()}
        return {item.item: by_key[item.item].version if item.item in by_key else None for item in items}

    def pack_alone(self, query: Query, budget: int) -> tuple[Packed, Prepared]:
        """Pack only the experience block into `budget` tokens (for measurement)."""
        prepared = self.prepare(query)
        packed = pack(
            prepared.sections,
            budget,
            lambda included: count(render_block(included)) if included else 0,
            breadth_first=True,
        )
        return packed, prepared


def render_block(included: Sequence[tuple[Section, str]]) -> str:
    """Sections as markdown, consecutive sections with the same title under one heading."""
    parts: list[str] = []
    last_title = None
    for section, text in included:
        if section.title != last_title:
            parts.append(f"## {section.title}\n")
            last_title = section.title
        parts.append(text)
    return "\n".join(parts)


def naive_block(items: Sequence[Item]) -> str:
    """Every item at full detail, no budget: the 'include everything' baseline."""
    sections = [Section(PREFIX + item.key, TITLES[item.section], (item.levels[0],)) for item in items]
    ordered = sorted(zip(sections, items, strict=True), key=lambda pair: ORDER.index(pair[1].section))
    return render_block([(section, section.levels[0]) for section, _ in ordered])


def _decision_item(row: ExperienceRow, section: str, query: Query) -> Item:
    outcome = _outcome(row)
    where = f"[{row.task_name}, {row.family}]" if section == "other-tasks" else f"({row.kind})"
    what = _what(row)
    result = _result_text(row, outcome)
    line = _clip(f"{where} {what} → {result}", 240)
    summary = line if not row.text or row.text in what else f"{line}\n  why: {_clip(row.text, 400)}"
    full = summary if not row.diff else f"{summary}\n```diff\n{_clip(row.diff, 1500)}\n```"
    return Item(
        key=f"decision:{row.decision_id}",
        section=section,
        levels=(full, summary, line),
        text=f"{row.kind} {row.text} {row.diff[:2000]}",
        family=row.family,
        signature=row.signature,
        device=row.device,
        error_signature=row.error_signature,
        task_id=row.task_id,
        speedup=row.speedup,
        outcome=outcome,
        created=row.created,
        version=row.child_id,
    )


def _what(row: ExperienceRow) -> str:
    params = row.params or {}
    if row.kind == "launch-config" and params.get("changes"):
        return "launch parameters " + ", ".join(
            f"{name} {change[0]}→{change[1]}" for name, change in sorted(params["changes"].items())
        )
    first = row.text.strip().split("\n", 1)[0] if row.text else row.kind
    return _clip(first, 160)


def _outcome(row: ExperienceRow) -> Literal["faster", "slower", "fixed", "failed", "correct", "unknown"]:
    if row.status is None:
        return "unknown"
    if not row.correct:
        return "failed"
    speedup = row.speedup
    if speedup is not None:
        return "faster" if speedup > 1.0 else "slower"
    return "fixed" if row.kind != "launch-config" else "correct"


def _result_text(row: ExperienceRow, outcome: str) -> str:
    if outcome == "failed":
        kind = row.error_kind or ("rejected by the gates" if row.status == "reject" else "wrong values")
        return f"failed ({kind})"
    if row.speedup is not None:
        method = f", {row.timing_method}" if row.timing_method else ""
        return f"{row.speedup:.2f}x the parent's speed ({row.time_ms:.3g} ms{method}, {row.device})"
    if outcome == "fixed":
        return "correct (passed)"
    return row.status or "not evaluated"


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tfidf(texts: Sequence[str]) -> list[dict[str, float]]:
    documents = [Counter(w.lower() for w in _WORD.findall(text) if len(w) > 1) for text in texts]
    frequency: Counter[str] = Counter()
    for document in documents:
        frequency.update(document.keys())
    total = len(documents)
    vectors = []
    for document in documents:
        vector = {w: (1 + math.log(n)) * math.log(1 + total / frequency[w]) for w, n in document.items()}
        norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
        vectors.append({w: v / norm for w, v in vector.items()})
    return vectors


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(w, 0.0) for w, v in a.items())


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
