"""Record a debug or optimize run into the experience store, and give its prompts their experience.

The agents call a recorder at a few points (start, each prompt, each new version, acceptance,
finish); the recorder turns that into the graph (versions, decisions, evaluations, edges), the
injection log, pattern evidence and learned patterns. Each call is one transaction, so a run
stopped at any point leaves a consistent trajectory up to its last completed step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kope.cases.task import Task
from kope.context.budget import Packed, Section
from kope.hashing import content_hash
from kope.knowledge.base import KnowledgeBase
from kope.memory.fingerprints import device_label, error_hash, normalize_error
from kope.memory.learned import learn, unified_diff
from kope.memory.packer import ExperiencePacker, Prepared, Query
from kope.memory.records import DecisionIn, EvaluationRecord, StepRecord
from kope.memory.store import ExperienceStore
from kope.protocol.results import EvalResult

_BLOCK = re.compile(r"<{5,9} ?SEARCH.*?>{5,9} ?REPLACE[^\n]*", re.DOTALL)
_FENCE = re.compile(r"```.*?```", re.DOTALL)
_REQUEST = re.compile(r"^\s*(TRACE|PROBE)\b.*$", re.MULTILINE)


def explanation_of(reply: str, limit: int = 800) -> str:
    """The words of a reply: code blocks, edit blocks and instrumentation requests removed."""
    text = _REQUEST.sub("", _FENCE.sub("", _BLOCK.sub("", reply)))
    text = re.sub(r"\s+", " ", text).strip()
    return text[:limit]


def outcome_text(result: EvalResult | None) -> str:
    if result is None:
        return "not evaluated"
    if result.error is not None:
        return f"{result.status} ({result.error.kind})"
    passed = sum(c.passed for c in result.cases)
    text = f"{result.status}: {passed}/{len(result.cases)} cases"
    timings = [c.timing.candidate_ms for c in result.cases if c.timing is not None]
    if timings and len(timings) == len(result.cases):
        text += f", {sum(timings):.4g} ms"
    return text


def failure_text(result: EvalResult, features: dict[str, Any] | None = None) -> str | None:
    """The signature text of a failed evaluation: the normalised error, or the failure's measured shape."""
    if result.error is not None:
        return normalize_error(result.error.message, result.error.kind)
    if result.status == "pass":
        return None
    if result.status == "reject":
        rules = sorted({f.rule for f in result.integrity.findings if f.severity == "reject"})
        return "reject: " + ", ".join(rules)
    held = sorted(name for name, value in (features or {}).items() if value is True)
    return "fail: " + (", ".join(held) if held else "wrong values")


def _scope(result: EvalResult) -> str:
    """`visible` when only the cases an agent is shown ran, else `all`."""
    return "visible" if result.cases and all(c.visible for c in result.cases) else "all"


class RunRecorder:
    """One run's writer: versions by content hash, the pending prompt's injections, the run's record."""

    def __init__(
        self,
        store: ExperienceStore,
        *,
        kind: str,
        task: Task,
        model: str,
        device: str,
        experience: bool = True,
        knowledge: KnowledgeBase | None = None,
    ) -> None:
        self.store = store
        self.task = store.ensure_task(task)
        self.device = device_label(device)
        self.run = store.start_run(kind, self.task.id, model=model, device=self.device)
        self.knowledge = knowledge
        self.ids: dict[str, int] = {}
        self.status: dict[int, str] = {}
        self._fixed: set[tuple[int, int]] = set()
        self.packer = ExperiencePacker(store, pattern_text=self._pattern_text) if experience else None
        self._prepared: Prepared | None = None
        self._evidence: dict[str, int | None] = {}

    def _pattern_text(self, pattern_id: str) -> str:
        if self.knowledge is None or pattern_id not in self.knowledge.patterns:
            return ""
        return " ".join(self.knowledge.patterns[pattern_id].fix.split())

    def version_id(self, source: str | None) -> int | None:
        return self.ids.get(content_hash(source)) if source is not None else None

    # -- prompts ---------------------------------------------------------------------------

    def prepare(self, query: Query) -> list[Section]:
        """Experience sections for the next prompt (none when experience is off)."""
        self._close_prompt("no new version")
        if self.packer is None:
            return []
        self._prepared = self.packer.prepare(query)
        return list(self._prepared.sections)

    def query(self, purpose: str, current: str, **extra: Any) -> Query:
        return Query(
            purpose=purpose,  # type: ignore[arg-type]
            family=self.task.family,
            signature=self.task.signature,
            device=self.device,
            task_id=self.task.id,
            run_id=self.run.id,
            version_id=self.version_id(current),
            **extra,
        )

    def packed(self, packed: Packed) -> str | None:
        """Log what the packer injected into the prompt just built; the prompt's id."""
        if self._prepared is None:
            return None
        assert self.packer is not None
        items = self.packer.log(self._prepared, packed)
        self._evidence = self.packer.evidence(self._prepared, items)
        return self._prepared.prompt_id

    def _close_prompt(self, outcome: str, produced: int | None = None) -> None:
        if self._prepared is not None:
            self.store.injection_outcome(self._prepared.prompt_id, outcome, produced)
        self._prepared, self._evidence = None, {}

    # -- the graph -------------------------------------------------------------------------

    def record(
        self,
        source: str,
        *,
        parent: str | None = None,
        made: DecisionIn | None = None,
        result: EvalResult | None = None,
        scope: str = "all",
        signature_text: str | None = None,
    ) -> StepRecord:
        """A version (with the decision that made it, its evaluation and edges) in one transaction."""
        evidence = dict(self._evidence) if made is not None else {}
        if made is not None and self._prepared is not None and made.prompt_id is None:
            made = made.model_copy(update={"prompt_id": self._prepared.prompt_id})
        step = self.store.record_step(
            self.run.id,
            self.task.id,
            source,
            parent_id=self.version_id(parent),
            made=made,
            result=result,
            scope=scope,
            device=self.device,
            evidence=evidence,
            signature_text=signature_text,
        )
        self.ids[content_hash(source)] = step.version.id
        if result is not None:
            self.status[step.version.id] = result.status
        if made is not None:
            self._close_prompt(outcome_text(result), step.version.id)
        return step

    def evaluation(
        self, source: str, result: EvalResult, *, scope: str, signature_text: str | None = None
    ) -> EvaluationRecord:
        """Another evaluation of a recorded version (full coverage, a confirmation run)."""
        version_id = self.version_id(source)
        if version_id is None:
            version_id = self.record(source).version.id
        return self.store.add_evaluation(
            version_id, result, run_id=self.run.id, scope=scope, device=self.device, signature_text=signature_text
        )

    def fixed_by(self, failing: str, fixing: str, decision_id: int | None = None) -> None:
        src, dst = self.version_id(failing), self.version_id(fixing)
        if src is not None and dst is not None and src != dst and (src, dst) not in self._fixed:
            self._fixed.add((src, dst))
            self.store.add_edge("fixed_by", src, dst=dst, decision_id=decision_id, run_id=self.run.id)

    def finish(
        self,
        *,
        status: str,
        stop_reason: str,
        tokens: tuple[int, int] = (0, 0),
        best: str | None = None,
        summary: dict[str, Any] | None = None,
    ) -> None:
        self._close_prompt("run ended")
        self.store.finish_run(
            self.run.id,
            status=status,
            stop_reason=stop_reason,
            tokens_prompt=tokens[0],
            tokens_completion=tokens[1],
            best_version=self.version_id(best),
            summary=summary,
        )


class DebugRecorder(RunRecorder):
    """The debug loop's recorder: attributes edits to patterns, adds evidence, learns unmatched repairs."""

    def __init__(
        self,
        store: ExperienceStore,
        *,
        task: Task,
        model: str,
        device: str,
        experience: bool = True,
        knowledge: KnowledgeBase | None = None,
    ) -> None:
        super().__init__(
            store, kind="debug", task=task, model=model, device=device, experience=experience, knowledge=knowledge
        )
        self.start_source: str | None = None
        self.start_features: dict[str, Any] = {}
        self.start_cues: list[str] = []
        self.start_signature: str | None = None
        self.explanations: dict[int, str] = {}
        self.patterns: dict[int, str] = {}
        self.decisions: dict[int, int] = {}

    def start(self, source: str, result: EvalResult, features: dict[str, Any], cues: Sequence[str]) -> None:
        text = failure_text(result, features)
        self.record(source, result=result, scope=_scope(result), signature_text=text)
        self.start_source = source
        self.start_features = dict(features)
        self.start_cues = list(cues)
        self.start_signature = error_hash(text) if text else None
        self.store.update_run(self.run.id, start_version=self.version_id(source))

    def sections(
        self, source: str, result: EvalResult, features: dict[str, Any], summary: str, hypotheses: Sequence[str]
    ) -> list[Section]:
        text = failure_text(result, features)
        query = self.query(
            "repair",
            source,
            error_signature=error_hash(text) if text else None,
            text=f"{summary} {' '.join(hypotheses)}",
            patterns=tuple(hypotheses),
        )
        return self.prepare(query)

    def step(
        self,
        parent: str,
        source: str,
        *,
        reply: str,
        result: EvalResult,
        features: dict[str, Any],
        hypotheses: Sequence[str],
        recipe: bool,
        tokens: tuple[int, int],
    ) -> None:
        explanation = explanation_of(reply)
        pattern = self.match(reply, hypotheses)
        made = DecisionIn(
            kind="recipe" if recipe else "edit",
            text=explanation,
            diff=unified_diff(parent, source),
            params={"pattern": pattern} if pattern else None,
            tokens_prompt=tokens[0],
            tokens_completion=tokens[1],
        )
        parent_status = self.status.get(self.version_id(parent) or -1)
        step = self.record(
            source,
            parent=parent,
            made=made,
            result=result,
            scope=_scope(result),
            signature_text=failure_text(result, features),
        )
        vid = step.version.id
        self.explanations[vid] = explanation
        if step.decision_id is not None:
            self.decisions[vid] = step.decision_id
        if pattern is not None:
            self.patterns[vid] = pattern
            self.store.add_pattern_evidence(
                pattern, "applied", device=self.device, task_id=self.task.id, version_id=vid, run_id=self.run.id
            )
        if parent_status is not None and parent_status != "pass" and result.status == "pass":
            self.fixed_by(parent, source, step.decision_id)

    def match(self, reply: str, hypotheses: Sequence[str]) -> str | None:
        """The hypothesis a reply applies: named by id or title, or two of its keywords in the explanation."""
        lowered = reply.lower()
        words = explanation_of(reply).lower()
        for pattern_id in hypotheses:
            if pattern_id.lower() in lowered or pattern_id.replace("-", " ").lower() in lowered:
                return pattern_id
            known = self.knowledge.patterns.get(pattern_id) if self.knowledge is not None else None
            if known is None:
                continue
            if known.title.lower() in lowered:
                return pattern_id
            if sum(1 for keyword in known.keywords if len(keyword) > 3 and keyword.lower() in words) >= 2:
                return pattern_id
        return None

    def accepted(self, source: str, result: EvalResult) -> None:
        self.evaluation(source, result, scope="all", signature_text=failure_text(result))

    def end(
        self,
        *,
        status: str,
        stop_reason: str,
        tokens: tuple[int, int],
        accepted: str | None,
        best: str,
        hypotheses: Sequence[str],
    ) -> None:
        summary: dict[str, Any] = {"hypotheses": list(hypotheses)}
        if accepted is not None and self.start_source is not None and accepted != self.start_source:
            vid = self.version_id(accepted)
            assert vid is not None
            self.fixed_by(self.start_source, accepted, self.decisions.get(vid))
            pattern = self.patterns.get(vid)
            if pattern is not None:
                self.store.mark_fixed(self.run.id, vid)
                summary["pattern"] = pattern
            else:
                explanation = " ".join(self._lineage_explanations(vid)) or "A repair that matched no known pattern."
                record, _ = learn(
                    self.store,
                    task_id=self.task.id,
                    family=self.task.family,
                    before=self.start_source,
                    after=accepted,
                    explanation=explanation,
                    features=self.start_features,
                    cues=self.start_cues,
                    error_signature=self.start_signature,
                    source_version=self.version_id(self.start_source),
                    fixed_version=vid,
                )
                self.store.add_pattern_evidence(
                    record.pattern_id,
                    "fixed",
                    device=self.device,
                    task_id=self.task.id,
                    version_id=vid,
                    run_id=self.run.id,
                )
                summary["learned"] = record.pattern_id
        self.finish(status=status, stop_reason=stop_reason, tokens=tokens, best=best, summary=summary)

    def _lineage_explanations(self, version_id: int) -> list[str]:
        chain = [version_id, *self.store.lineage(version_id, self.run.id)]
        return [self.explanations[v] for v in reversed(chain) if self.explanations.get(v)]
