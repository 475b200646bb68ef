"""The debug loop: turn a near-miss kernel into one that passes full coverage and the gates.

    evaluate the visible cases, diagnose ──► pass? ──► every case + integrity gates ──► repaired
        │ no                                               │ rejected / hidden failure
        ▼                                                  ▼
    prompt (budgeted) ──► model ──► edit or instrumentation request ──► new version ──► loop

Every step is bounded (kope.agents.guards), every exchange and evaluation goes to the transcript
(JSONL), and the best version seen is what the loop returns when it does not repair.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kope.agents.edits import EditError, Request, parse_reply
from kope.agents.guards import Guards, Limits, Score
from kope.agents.prompts import StepContext, build
from kope.cases.task import Case, Task, load_task
from kope.diagnose.diagnoser import Diagnoser, Diagnosis
from kope.evaluate import EvalOptions, EvalResult, Evaluator
from kope.evaluate.confine import SandboxReport
from kope.evaluate.protocol import TraceSpec
from kope.knowledge.base import KnowledgeBase
from kope.models.base import Model, ModelError, RepairHints, Usage
from kope.models.offline import EXHAUSTED, OfflineModel
from kope.repair.search import RepairSearch, SearchConfig, SearchResult
from kope.repair.search import digest as content_hash
from kope.repair.search import visible_score as score_of

if TYPE_CHECKING:
    from kope.memory.recording import DebugRecorder
    from kope.memory.store import ExperienceStore

Status = Literal["repaired", "unrepaired", "rejected"]


class TokenCount(BaseModel):
    prompt: int = 0
    completion: int = 0


class Step(BaseModel):
    iteration: int
    model: str
    action: str
    """edit, instrumentation, no-edit, edit-failed, oscillation, model-error"""
    outcome: str = ""
    score: list[float] | None = None
    tokens: TokenCount = Field(default_factory=TokenCount)
    prompt_tokens_packed: int = 0
    dropped_sections: list[str] = Field(default_factory=list)


class DebugReport(BaseModel):
    """What `kope debug --json` prints."""

    status: Status
    iterations: int
    tokens: TokenCount
    output: str | None
    stop_reason: str
    task: str
    candidate: str
    model: str
    transcript: str | None = None
    seconds: float = 0.0
    steps: list[Step] = Field(default_factory=list)
    rejected_versions: int = 0
    """Versions right on every case but rejected by the integrity gates."""
    final: dict[str, Any] | None = None
    """Summary of the full-coverage evaluation of the returned version."""
    hypotheses: list[str] = Field(default_factory=list)
    """Pattern ids of the first diagnosis that ranked any hypotheses, best first."""
    sandbox: SandboxReport | None = None
    """What protected the candidate's runs in the final full-coverage evaluation."""
    evaluations: int = 0
    """Candidate versions evaluated (search candidates, the loop's edits and acceptance checks)."""
    search: list[SearchResult] = Field(default_factory=list)
    """Each round of the offline search: what was tried, in order, and why it was kept or dropped."""


@dataclass
class DebugConfig:
    limits: Limits = field(default_factory=Limits)
    prompt_budget: int = 12_000
    reply_tokens: int = 4096
    recipes_first: bool = False
    probes: bool = True
    """Run the diagnosis probes (bounds checker, determinism, size sweep) at each step."""
    options: EvalOptions = field(default_factory=EvalOptions)
    diagnosis: bool = True
    """Ablation switch: False keeps the diagnosis out of the prompt and the hints (no evidence, no hypotheses)."""
    recipes: bool = True
    """Ablation switch: False disables the knowledge base's recipes (no recipe in the hints, no recipes-first)."""
    search: bool = True
    """The offline model (and `recipes_first`) repairs by the bounded search over edits (kope.repair.search);
    False: the recipe loop alone, one recipe edit per step (the model before the search)."""
    search_config: SearchConfig = field(default_factory=SearchConfig)
    max_search_rounds: int = 2
    """Searches per repair: a second one starts from a version right on the shown cases that fails hidden ones."""


class Transcript:
    """JSON lines: every prompt, reply, evaluation, diagnosis and token count."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")

    def write(self, event: str, **data: Any) -> None:
        if self.path is None:
            return
        record = {"event": event, "time": round(time.time(), 3), **data}
        with self.path.open("a") as handle:
            handle.write(json.dumps(record, default=str) + "\n")


ProgressFn = Callable[[Step], None]


def failure_signature(result: EvalResult) -> str:
    if result.error is not None:
        return f"{result.error.kind}:{result.error.message[:120]}"
    wrong = [(c.name, c.mismatch_count) for c in result.cases if not c.passed]
    return json.dumps(wrong)


class DebugLoop:
    def __init__(
        self,
        model: Model,
        evaluator: Evaluator,
        *,
        knowledge: KnowledgeBase | None = None,
        config: DebugConfig | None = None,
        transcript: Path | None = None,
        progress: ProgressFn | None = None,
        store: ExperienceStore | None = None,
    ) -> None:
        self.model = model
        self.evaluator = evaluator
        self.config = config or DebugConfig()
        self.diagnoser = Diagnoser(evaluator, knowledge)
        self.transcript = Transcript(transcript)
        self.progress = progress or (lambda step: None)
        recipes_first = self.config.recipes_first and self.config.recipes
        self.offline = OfflineModel() if recipes_first and not isinstance(model, OfflineModel) else None
        offline = isinstance(model, OfflineModel) or recipes_first
        self.search = (
            RepairSearch(evaluator, self.config.search_config)
            if offline and self.config.search and self.config.recipes and self.config.diagnosis
            and self.diagnoser.knowledge.patterns  # the knowledge-base ablation: no patterns, no hypotheses, no search
            else None
        )
        if self.search is not None:
            self.offline = None  # the search has tried the recipes already (RecipeProposer)
        self.store = store
        self._memory: DebugRecorder | None = None
        if store is not None:
            from kope.memory.learned import with_learned

            self.diagnoser.knowledge = with_learned(self.diagnoser.knowledge, store)

    def run(self, task: Task | str | Path, candidate: str | Path, out: Path) -> DebugReport:
        began = time.monotonic()
        task = task if isinstance(task, Task) else load_task(task)
        options = self.config.options
        cases = self.evaluator.cases(task, options=options)
        visible = [c for c in cases if c.visible]
        source = Path(candidate).read_text()
        work = out.with_name(f".{out.name}.work.py")
        state = _State(source=source, best_source=source)
        guards = Guards(self.config.limits)
        tokens = Usage()
        steps: list[Step] = []
        stop_reason = ""
        diagnosis = self._diagnose(task, work, source, visible)
        ranked = [h.pattern for h in diagnosis.hypotheses]
        state.seen.add(content_hash(source))
        guards.improved(score_of(_evaluation(diagnosis)))
        state.best_score = score_of(_evaluation(diagnosis))
        self.transcript.write("start", task=str(task.path), candidate=str(candidate), model=self.model.name,
                              evaluation=_evaluation(diagnosis).model_dump(mode="json"))
        self._memory = self._recorder(task, source, diagnosis)
        while True:
            evaluation = _evaluation(diagnosis)
            unchecked = content_hash(state.source) not in state.accept_checked
            if evaluation.status in ("pass", "reject") and unchecked:
                state.accept_checked.add(content_hash(state.source))
                accepted = self._accept(task, work, state.source, cases, state)
                if accepted:
                    stop_reason = "repaired"
                    break
                diagnosis = self._diagnose(task, work, state.source, visible, sweep=True)
                ranked = ranked or [h.pattern for h in diagnosis.hypotheses]
            if self.search is not None and len(state.searches) < self.config.max_search_rounds and (
                content_hash(state.source) not in state.searched
            ):
                found, diagnosis = self._search(task, work, visible, cases, diagnosis, state, len(steps) + 1)
                steps.append(found)
                self.progress(found)
                if state.accepted:
                    stop_reason = "repaired"
                    break
                again = content_hash(state.source) not in state.searched
                if diagnosis.status in ("pass", "reject") or (again and len(state.searches) < self.config.max_search_rounds):
                    continue
                if isinstance(self.model, OfflineModel):
                    stop_reason = "search-exhausted"
                    break
            stop = guards.before_call(len(steps), tokens.total) or guards.after_step()
            if stop:
                stop_reason = stop
                break
            step, diagnosis, exhausted = self._step(task, work, visible, diagnosis, state, guards, len(steps) + 1)
            tokens = tokens + Usage(prompt=step.tokens.prompt, completion=step.tokens.completion)
            steps.append(step)
            self.progress(step)
            if exhausted:
                stop_reason = "model-exhausted"
                break
            if step.action == "model-error":
                stop_reason = "model-error"
                break
        status: Status = "repaired" if state.accepted else ("rejected" if state.rejected else "unrepaired")
        final_source = state.accepted or state.best_source
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(final_source)
        work.unlink(missing_ok=True)
        final = self.evaluator.evaluate(task, out, options=options, cases=cases)
        if status == "repaired" and final.status != "pass":
            # The accepted version failed its second full evaluation: its outputs depend on chance (a load
            # without a mask reading memory it does not own, a race), so it is not repaired.
            status, stop_reason = "unrepaired", "unstable"
            self.transcript.write("unstable", evaluation=final.model_dump(mode="json"))
        report = DebugReport(
            status=status,
            iterations=len(steps),
            tokens=TokenCount(prompt=tokens.prompt, completion=tokens.completion),
            output=str(out),
            stop_reason=stop_reason,
            task=str(task.path),
            candidate=str(candidate),
            model=self.model.name,
            transcript=str(self.transcript.path) if self.transcript.path else None,
            seconds=round(time.monotonic() - began, 3),
            steps=steps,
            rejected_versions=state.rejected,
            hypotheses=ranked,
            sandbox=final.sandbox,
            evaluations=state.evaluations,
            search=state.searches,
            final={
                "status": final.status,
                "cases_passed": sum(c.passed for c in final.cases),
                "cases": len(final.cases),
                "integrity": final.integrity.verdict,
            },
        )
        self.transcript.write("end", report=report.model_dump(mode="json", exclude={"steps"}))
        if self._memory is not None:
            self._memory.end(status=status, stop_reason=stop_reason, tokens=(tokens.prompt, tokens.completion),
                             accepted=state.accepted, best=final_source, hypotheses=ranked)
        return report

    # -- one step --------------------------------------------------------------------------

    def _step(
        self,
        task: Task,
        work: Path,
        visible: list[Case],
        diagnosis: Diagnosis,
        state: _State,
        guards: Guards,
        iteration: int,
    ) -> tuple[Step, Diagnosis, bool]:
        shown = self.config.diagnosis
        recipes = self.config.recipes
        hints = RepairHints(
            source=state.source,
            hypotheses=[{"pattern": h.pattern, "recipe": h.recipe if recipes else None, "score": h.score}
                        for h in diagnosis.hypotheses] if shown else [],
            features=dict(diagnosis.signature) if shown else {},
            tried=set(state.seen),
        )
        model: Model = self.model
        if self.offline is not None and self.offline.proposals(hints) and any(
            content_hash(edit) not in state.seen for _, edit in self.offline.proposals(hints)
        ):
            model = self.offline
        context = StepContext(
            reference=task.source,
            kernel=state.source,
            diagnosis=diagnosis if shown else None,
            history=state.history,
            feedback=state.feedback,
            instrumentation=state.instrumentation,
            experience=self._experience(state.source, diagnosis),
        )
        messages, packed = build(context, self.config.prompt_budget)
        if self._memory is not None:
            self._memory.packed(packed)
        step = Step(iteration=iteration, model=model.name, action="", prompt_tokens_packed=packed.tokens,
                    dropped_sections=packed.dropped)
        self.transcript.write("prompt", iteration=iteration, model=model.name, tokens=packed.tokens,
                              budget=packed.budget, dropped=packed.dropped, reduced=packed.reduced,
                              messages=[m.model_dump() for m in messages])
        state.feedback, state.instrumentation = [], []
        try:
            reply = model.complete(messages, max_tokens=self.config.reply_tokens, hints=hints)
        except ModelError as exc:
            step.action, step.outcome = "model-error", str(exc)
            self.transcript.write("model-error", iteration=iteration, error=str(exc))
            return step, diagnosis, False
        step.tokens = TokenCount(prompt=reply.usage.prompt, completion=reply.usage.completion)
        self.transcript.write("reply", iteration=iteration, text=reply.text, usage=reply.usage.model_dump(),
                              stop_reason=reply.stop_reason)
        if reply.stop_reason == EXHAUSTED and model is self.model:
            step.action, step.outcome = "no-edit", "the model has nothing more to propose"
            return step, diagnosis, True
        parsed = parse_reply(reply.text)
        if parsed.requests and not parsed.has_edit:
            step.action = "instrumentation"
            results = [self._instrument(task, work, state.source, visible, request) for request in parsed.requests[:4]]
            state.instrumentation = results
            step.outcome = f"{len(results)} request(s) answered"
            self.transcript.write("instrumentation", iteration=iteration, results=results)
            guards.no_progress()
            return step, diagnosis, False
        if not parsed.has_edit:
            step.action, step.outcome = "no-edit", "no SEARCH/REPLACE block or python file in the reply"
            state.feedback.append("Your reply had no edit. Answer with SEARCH/REPLACE blocks or the whole file in a ```python block.")
            guards.no_progress()
            return step, diagnosis, False
        try:
            new_source = parsed.apply(state.source)
        except EditError as exc:
            step.action, step.outcome = "edit-failed", str(exc)
            state.feedback.append(f"Your edit did not apply: {exc}. The current kernel is unchanged.")
            guards.no_progress()
            return step, diagnosis, False
        digest = content_hash(new_source)
        if digest in state.seen:
            step.action, step.outcome = "oscillation", "a version already tried"
            state.feedback.append(
                "That edit gives back a version of the kernel that was already evaluated; it was refused. Try something else."
            )
            guards.no_progress()
            return step, diagnosis, False
        state.seen.add(digest)
        state.evaluations += 1
        step.action = "edit"
        new_diagnosis = self._diagnose(task, work, new_source, visible)
        evaluation = _evaluation(new_diagnosis)
        score = score_of(evaluation)
        step.score = list(score)
        step.outcome = _describe(evaluation)
        self.transcript.write("evaluation", iteration=iteration, source=new_source,
                              evaluation=evaluation.model_dump(mode="json"),
                              hypotheses=[h.model_dump() for h in new_diagnosis.hypotheses])
        if self._memory is not None:
            self._memory.step(state.source, new_source, reply=reply.text, result=evaluation,
                              features=dict(new_diagnosis.signature), hypotheses=[h.pattern for h in diagnosis.hypotheses],
                              recipe=model is self.offline or isinstance(model, OfflineModel),
                              tokens=(reply.usage.prompt, reply.usage.completion))
        origin = " (a kope recipe)" if model is self.offline else ""
        state.history.append(f"attempt {iteration}{origin}: {step.outcome}")
        guards.failure(failure_signature(evaluation))
        if guards.improved(score) or score <= (state.best_score or score):
            state.best_score, state.best_source = score, new_source
            state.source = new_source
            return step, new_diagnosis, False
        state.feedback.append(
            f"Your last change made things worse ({step.outcome}); it was reverted to the best version so far."
        )
        return step, diagnosis, False

    def _search(
        self, task: Task, work: Path, visible: list[Case], cases: list[Case], diagnosis: Diagnosis, state: _State,
        iteration: int,
    ) -> tuple[Step, Diagnosis]:
        """One round of the offline search from the current version; adopt its best partial edit."""
        assert self.search is not None
        state.searched.add(content_hash(state.source))
        shown = list(visible)
        if diagnosis.fails_elsewhere:
            # Right on the shown cases, wrong on sizes the diagnosis swept: search on those too.
            shown += [Case(name=c.name, overrides=dict(c.overrides), visible=False)
                      for c in diagnosis.cases if not c.passed and not c.visible and c.error_kind is None][:2]

        def accept(source: str) -> bool:
            state.accept_checked.add(content_hash(source))
            return self._accept(task, work, source, cases, state)

        result = self.search.run(
            task, state.source, diagnosis, shown, accept, scratch=work.parent / f".{work.stem}.search",
            options=self.config.options, tried=state.seen,
            start_score=None if diagnosis.fails_elsewhere else score_of(_evaluation(diagnosis)),
        )
        state.searches.append(result)
        state.evaluations += result.evaluations
        for trial_source in (result.accepted, result.best):
            if trial_source is not None:
                state.seen.add(content_hash(trial_source))
        self.transcript.write("search", iteration=iteration, result=result.model_dump(mode="json"))
        step = Step(iteration=iteration, model="search", action="search",
                    outcome=f"{result.evaluations} candidate(s) evaluated, {result.acceptance_checks} acceptance "
                            f"check(s): {result.stop_reason}")
        if state.accepted:
            return step, diagnosis
        state.feedback.append(result.summary())
        if result.best is not None:
            state.source = state.best_source = result.best
            state.best_score = tuple(result.best_score or (2, 1.0, 0.0))  # type: ignore[assignment]
            state.history.append(f"kope's search: {result.best_description}")
            diagnosis = self._diagnose(task, work, state.source, visible)
            if _evaluation(diagnosis).status in ("pass", "reject"):
                state.accept_checked.add(content_hash(state.source))
                diagnosis = self._diagnose(task, work, state.source, visible, sweep=True)
        return step, diagnosis

    def _accept(self, task: Task, work: Path, source: str, cases: list[Case], state: _State) -> bool:
        """Full coverage and the integrity gates: only then is a version repaired."""
        state.evaluations += 1
        work.write_text(source)
        full = self.evaluator.evaluate(task, work, options=self.config.options, cases=cases)
        self.transcript.write("acceptance", evaluation=full.model_dump(mode="json"))
        if self._memory is not None:
            self._memory.accepted(source, full)
        if full.status == "pass":
            state.accepted = source
            return True
        numerically_right = all(c.passed for c in full.cases)
        if numerically_right and full.integrity.verdict == "reject":
            state.rejected += 1
            findings = "; ".join(f"{f.rule}: {f.message}" for f in full.integrity.findings if f.severity == "reject")
            state.feedback.append(
                f"The kernel is right on every case but the integrity gates rejected it ({findings}). "
                "Do the work in your own kernels."
            )
        else:
            hidden = [c for c in full.cases if not c.passed and not c.visible]
            kinds = sorted({c.error.kind if c.error else "wrong values" for c in hidden})
            state.feedback.append(
                f"The kernel is right on the case you are shown but fails {len(hidden)} hidden case(s) of other sizes "
                f"({', '.join(kinds)}). Make it correct for any size: masks, ceiling division, loops over blocks."
            )
        if state.best_score is not None and state.best_score[0] >= 1:
            state.best_score = (1, 0.0, 0.0)
        return False

    def _diagnose(self, task: Task, work: Path, source: str, visible: list[Case], *, sweep: bool = False) -> Diagnosis:
        work.write_text(source)
        return self.diagnoser.diagnose(task, work, options=self.config.options, cases=visible,
                                       probes=self.config.probes, sweep_if_passing=sweep)

    def _instrument(self, task: Task, work: Path, source: str, visible: list[Case], request: Request) -> str:
        work.write_text(source)
        quick = EvalOptions(
            device=self.config.options.device, trials=1, integrity=False, sandbox=self.config.options.sandbox
        )
        if request.kind == "trace":
            spec = TraceSpec(kernel=request.kernel, line=request.line, pid=list(request.pid))
            result = self.evaluator.evaluate(task, work, options=_with(quick, trace=spec), cases=visible[:1])
            hits = result.cases[0].trace or []
            if not hits:
                return f"TRACE {request.kernel} line {request.line} pid {request.pid}: never reached"
            lines = [f"TRACE {request.kernel} line {request.line}:"]
            for hit in hits[:4]:
                lines.append(f"program {tuple(hit.pid)}:")
                lines += [f"  {name} = {value}" for name, value in hit.variables.items()]
            return "\n".join(lines)
        diagnosis = self.diagnoser.diagnose(task, work, options=quick, cases=visible, probes=True)
        wanted = {"bounds": ("bounds",), "sizes": ("size ",), "determinism": ("determinism",)}[request.kind]
        lines = [f"PROBE {request.kind}:"]
        lines += [f"  {p.name}: {p.detail}" for p in diagnosis.probes if p.name.startswith(wanted)]
        if request.kind == "bounds":
            lines += [
                f"  {b.kind} in {b.kernel} line {b.line}, program {tuple(b.pid)}: {b.lanes} lanes, "
                f"up to {b.elements_out} elements {b.nearest}"
                for b in diagnosis.bounds
            ]
        return "\n".join(lines)

    # -- the experience store (when one is given) -----------------------------------------

    def _recorder(self, task: Task, source: str, diagnosis: Diagnosis) -> DebugRecorder | None:
        if self.store is None:
            return None
        from kope.memory.recording import DebugRecorder

        recorder = DebugRecorder(self.store, task=task, model=self.model.name, device=self.config.options.device,
                                 knowledge=self.diagnoser.knowledge)
        recorder.start(source, _evaluation(diagnosis), dict(diagnosis.signature), [c["cue"] for c in diagnosis.cues])
        return recorder

    def _experience(self, source: str, diagnosis: Diagnosis) -> list[Any]:
        if self._memory is None:
            return []
        return self._memory.sections(source, _evaluation(diagnosis), dict(diagnosis.signature),
                                     "\n".join(diagnosis.summary().splitlines()[:8]),
                                     [h.pattern for h in diagnosis.hypotheses])


@dataclass
class _State:
    source: str
    best_source: str
    best_score: Score | None = None
    seen: set[str] = field(default_factory=set)
    history: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    instrumentation: list[str] = field(default_factory=list)
    accepted: str | None = None
    rejected: int = 0
    accept_checked: set[str] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)
    searches: list[SearchResult] = field(default_factory=list)
    evaluations: int = 0


def _evaluation(diagnosis: Diagnosis) -> EvalResult:
    assert diagnosis.evaluation is not None
    return diagnosis.evaluation


def _with(options: EvalOptions, **changes: Any) -> EvalOptions:
    from dataclasses import replace

    return replace(options, **changes)


def _describe(result: EvalResult) -> str:
    if result.status == "error" and result.error is not None:
        return f"error ({result.error.kind}): {result.error.message[:160]}"
    passed = sum(c.passed for c in result.cases)
    if result.status == "reject":
        return "right on the shown case(s) but rejected by the gates"
    if passed == len(result.cases):
        return "right on the shown case(s)"
    worst = max((c.mismatch_fraction or 0.0) for c in result.cases)
    return f"{passed}/{len(result.cases)} shown case(s) right; up to {worst:.1%} of elements wrong"


def debug(
    task: Task | str | Path,
    candidate: str | Path,
    model: Model,
    *,
    out: Path,
    evaluator: Evaluator,
    config: DebugConfig | None = None,
    transcript: Path | None = None,
    progress: ProgressFn | None = None,
    store: ExperienceStore | None = None,
) -> DebugReport:
    """Repair `candidate` with `model`; write the result to `out` and return the report (and record it in `store`)."""
    loop = DebugLoop(model, evaluator, config=config, transcript=transcript, progress=progress, store=store)
    return loop.run(task, candidate, out)
