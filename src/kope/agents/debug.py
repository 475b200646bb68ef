"""The debug loop: turn a near-miss kernel into one that passes full coverage and the gates.

    evaluate the visible cases, diagnose ──► pass? ──► every case + integrity gates ──► repaired
        │ no                                               │ rejected / hidden failure
        ▼                                                  ▼
    offline search (no model) ─┐
    prompt (budgeted) ──► proposers (recipes, model) ──► edit or instrumentation request ──► new version ──► loop

Every step is bounded (kope.loop.Guards), every exchange and evaluation goes to the transcript
(JSONL), and the best version seen is what the loop returns when it does not repair. Everything that
runs a version goes through the environment (kope.agents.environment): the sandboxed evaluator, or a
scripted fake in tests.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kope.agents.environment import Environment, SandboxEnvironment
from kope.agents.prompts import StepContext, build, shown_task
from kope.agents.proposers import ModelProposer, Proposal, Proposer, RecipeProposer, RepairView
from kope.cases.task import Case, Task, load_task
from kope.diagnose.findings import findings
from kope.diagnose.report import Diagnosis
from kope.evaluate import EvalOptions, Evaluator
from kope.hashing import content_hash
from kope.knowledge.base import KnowledgeBase
from kope.loop import Guards, LoopLimits, StopReason, Transcript, version_score
from kope.models.base import Model, Usage
from kope.protocol.results import EvalResult
from kope.protocol.sandbox import SandboxReport
from kope.repair.search import Bases, SearchConfig, SearchResult

if TYPE_CHECKING:
    from kope.memory.recording import DebugRecorder
    from kope.memory.store import ExperienceStore

_ROUND_BUDGETS = ("time budget", "evaluation budget", "acceptance checks")
"""A search round's own limits (`SearchConfig.max_seconds`, `max_evaluations`, and its acceptance checks spent with
a version right on the shown cases left unchecked): a round that stops on one leaves candidates untried."""

DebugStatus = Literal["repaired", "pass", "unrepaired", "rejected"]
"""`pass`: the kernel as given was right on every case and clean under the gates; nothing was changed."""


class Step(BaseModel):
    iteration: int
    model: str
    action: str
    """edit, instrumentation, no-edit, edit-failed, oscillation, model-error, search"""
    outcome: str = ""
    score: list[float] | None = None
    tokens: Usage = Field(default_factory=Usage)
    prompt_tokens_packed: int = 0
    dropped_sections: list[str] = Field(default_factory=list)


class FinalCheck(BaseModel):
    """The full-coverage evaluation of the version the loop returns (every case, the gates)."""

    status: str
    """pass, fail, reject or error: the evaluator's status."""
    cases_passed: int
    """Cases, visible and hidden, on which the version is right."""
    cases: int
    """Cases judged (a case the candidate's own precondition refused is not: `not_judged`)."""
    not_judged: int = 0
    """Cases of other sizes the version's own precondition refused (`kope.evaluate.preconditions`)."""
    integrity: str
    """The gates' verdict: clean or reject."""

    @classmethod
    def of(cls, result: EvalResult) -> FinalCheck:
        return cls(
            status=result.status,
            cases_passed=sum(c.passed for c in result.cases),
            cases=sum(c.outside is None for c in result.cases),
            not_judged=sum(c.outside is not None for c in result.cases),
            integrity=result.integrity.verdict,
        )


class DebugReport(BaseModel):
    """What `kope debug --json` prints."""

    status: DebugStatus
    iterations: int
    tokens: Usage
    output: str | None
    stop_reason: StopReason
    task: str
    candidate: str
    model: str
    transcript: str | None = None
    seconds: float = 0.0
    steps: list[Step] = Field(default_factory=list)
    rejected_versions: int = 0
    """Versions right on every case but rejected by the integrity gates."""
    final: FinalCheck
    """Summary of the full-coverage evaluation of the returned version."""
    hypotheses: list[str] = Field(default_factory=list)
    """Pattern ids of the first diagnosis that ranked any hypotheses, best first."""
    sandbox: SandboxReport | None = None
    """What protected the candidate's runs in the final full-coverage evaluation."""
    evaluations: int = 0
    """Candidate versions evaluated (search candidates, the loop's edits and acceptance checks)."""
    search: list[SearchResult] = Field(default_factory=list)
    """Each round of the offline search: what was tried, in order, and why it was kept or dropped."""
    smaller_cases: str | None = None
    """Why the cases were derived again at a smaller element budget for this candidate (too slow in the CPU
    interpreter for a session of many evaluations), or None."""


@dataclass
class DebugConfig:
    limits: LoopLimits = field(default_factory=LoopLimits)
    prompt_budget: int = 12_000
    reply_tokens: int = 4096
    recipes_first: bool = False
    probes: bool = True
    """Run the diagnosis probes (bounds checker, determinism, size sweep) at each step."""
    options: EvalOptions = field(default_factory=EvalOptions)
    diagnosis: bool = True
    """Ablation switch: False keeps the diagnosis out of the prompt and the proposers (no evidence, no hypotheses)."""
    findings: bool = True
    """Ablation switch: False keeps the findings section (wrong region, the reference's formulas, several programs
    writing one element: kope.diagnose.findings) out of the prompt."""
    recipes: bool = True
    """Ablation switch: False disables the knowledge base's recipes (no recipe proposer, no recipes-first)."""
    search: bool = True
    """Without a model (and with `recipes_first`) repair by the bounded search over edits (kope.repair.search);
    False: the recipe loop alone, one recipe edit per step (the offline repair before the search)."""
    search_config: SearchConfig = field(default_factory=SearchConfig)
    max_search_rounds: int = 20
    """Searches per repair: a later one starts from the best version the last one found (a version right on the
    shown cases that fails hidden ones, a partial fix), or goes on from the same version where the last one ran out
    of its own budget (`SearchConfig.max_seconds`, `max_evaluations`) with candidates left. The time budget is what
    ends most repairs; this bounds one without (five rounds stopped cheap kernels with 40% of their budget unspent)."""


DebugProgress = Callable[[Step], None]


def shown_findings(result: EvalResult) -> str:
    """The gate's rejecting findings as a model may see them: a message that only a hidden case produced is
    replaced by its rule (a run-time message can carry what the candidate chose to put there on that case, such as
    its size in a class name), so no hidden case's size reaches a prompt."""
    hidden = {(f.rule, f.message) for c in result.cases if not c.visible for f in c.findings}
    visible = {(f.rule, f.message) for c in result.cases if c.visible for f in c.findings}
    shown: list[str] = []
    for finding in result.integrity.findings:
        if finding.severity != "reject":
            continue
        key = (finding.rule, finding.message)
        text = f"{finding.rule}: {finding.message}" if key in visible or key not in hidden else finding.rule
        if text not in shown:
            shown.append(text)
    return "; ".join(shown)


def failure_key(result: EvalResult) -> str:
    """What tells two failures apart for the oscillation guard: the error, or which cases fail by how much."""
    if result.error is not None:
        return f"{result.error.kind}:{result.error.message[:120]}"
    wrong = [(c.name, c.mismatch_count) for c in result.cases if not c.passed]
    return json.dumps(wrong)


@dataclass
class _State:
    """Everything one run knows: the versions, the best one, the guards, what the next prompt says."""

    task: Task
    cases: list[Case]
    source: str
    best_source: str
    diagnosis: Diagnosis
    guards: Guards
    start: str = ""
    """The kernel as given."""
    tokens: Usage = field(default_factory=Usage)
    steps: list[Step] = field(default_factory=list)
    ranked: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    history: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    instrumentation: list[str] = field(default_factory=list)
    accepted: str | None = None
    rejected: int = 0
    accept_checked: set[str] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)
    searches: list[SearchResult] = field(default_factory=list)
    bases: Bases = field(default_factory=Bases)
    """What the last search round kept for the next one from the same version (`kope.repair.search.Bases`)."""
    evaluations: int = 0
    failed_hidden: dict[str, list[str]] = field(default_factory=dict)
    """By content hash: the hidden cases a version's full check found it wrong on (wrong values, or an error it made
    there: `CaseResult.shows_bug`), in case order (a low-signal start's: the most elements wrong first)."""
    showing: list[Case] = field(default_factory=list)
    """Cases a round's false repair was found wrong on (`SearchResult.refined_case`: larger than the derived ones):
    every later round is shown them, so that its start, often that false repair, is not taken for right again and
    its versions are told apart there rather than by one acceptance check each."""
    late_check: bool = False
    """Whether the one full check allowed after the time budget ran out has been spent."""
    patience: float = 1.0
    """The full checks' time limit, as a multiple of a run's: `_PATIENCE` once a version right on the shown cases
    outlived it (a slow kernel's full check runs every case several times), for its check again and the final one."""

    @property
    def visible(self) -> list[Case]:
        return [c for c in self.cases if c.visible]

    def refused(self, source: str) -> list[Case]:
        """The hidden cases on which `source`'s failed full check found it wrong."""
        failed = self.failed_hidden.get(content_hash(source), [])
        return [c for c in self.cases if c.name in failed]

    @property
    def evaluation(self) -> EvalResult:
        assert self.diagnosis.evaluation is not None
        return self.diagnosis.evaluation


_FAILED_HIDDEN = 2
"""Hidden cases a full check found wrong that join the shown ones in the next search (the first of
`_State.failed_hidden`)."""

_PATIENCE = 3.0
"""The time limit of a full check that outlived a run's, as a multiple of it (`_State.patience`)."""


class DebugLoop:
    """Repair one kernel: `run` loops over `step` (ask the proposers, evaluate, keep or revert) until a stop."""

    def __init__(
        self,
        model: Model | None,
        environment: Environment | Evaluator,
        *,
        knowledge: KnowledgeBase | None = None,
        config: DebugConfig | None = None,
        transcript: Path | None = None,
        progress: DebugProgress | None = None,
        store: ExperienceStore | None = None,
    ) -> None:
        """`model` None: kope's offline proposers alone (`--model offline`); an `Evaluator` is wrapped in
        the sandboxed environment."""
        self.model = model
        self.name = model.name if model is not None else "offline"
        self.config = config or DebugConfig()
        self.env: Environment = (
            environment
            if not isinstance(environment, Evaluator)
            else SandboxEnvironment(
                environment,
                knowledge,
                options=self.config.options,
                probes=self.config.probes,
                search=self.config.search_config,
            )
        )
        self.transcript = Transcript(transcript)
        self.progress = progress or (lambda step: None)
        config = self.config
        offline = model is None or (config.recipes_first and config.recipes)
        self.searching = bool(
            offline
            and config.search
            and config.recipes
            and config.diagnosis
            and self.env.can_search
            and self.env.knowledge.patterns
        )  # the knowledge-base ablation: no patterns, no search
        self.proposers: list[Proposer[RepairView]] = []
        if model is None or (offline and not self.searching):  # the search has tried the recipes already
            self.proposers.append(RecipeProposer())
        if model is not None:
            self.proposers.append(ModelProposer(model, max_tokens=config.reply_tokens))
        self.store = store
        self._memory: DebugRecorder | None = None
        if store is not None:
            from kope.memory.learned import with_learned

            self.env.knowledge = with_learned(self.env.knowledge, store)

    def run(
        self, task: Task | str | Path, candidate: str | Path, out: Path, *, cases: Sequence[Case] | None = None
    ) -> DebugReport:
        """Repair `candidate`, writing the returned version to `out`; `cases`: evaluate on these instead of
        the task's (`--set`, `--cases`)."""
        began = time.monotonic()
        task = task if isinstance(task, Task) else load_task(task)
        source = Path(candidate).read_text()
        self.env.deadline = began + self.config.limits.max_seconds
        started = self.env.start(task, out, source if cases is None else None)
        cases = list(cases) if cases is not None else started
        diagnosis = self.env.diagnose(source, [c for c in cases if c.visible])
        state = _State(
            task=task,
            cases=cases,
            source=source,
            best_source=source,
            start=source,
            diagnosis=diagnosis,
            guards=Guards(self.config.limits, started=began),
        )
        state.ranked = [h.pattern for h in state.diagnosis.hypotheses]
        state.seen.add(content_hash(source))
        state.guards.improved(version_score(state.evaluation))
        self.transcript.write(
            "start",
            task=str(task.path),
            candidate=str(candidate),
            model=self.name,
            evaluation=state.evaluation.model_dump(mode="json"),
            fitted=self.env.fitted,
        )
        if self.searching and state.evaluation.status == "fail" and any(c.low_signal for c in state.visible):
            self._show_signal(state)
        self._memory = self._recorder(task, source, state.diagnosis)
        stop: StopReason | None = None
        while stop is None:
            stop = self._turn(state)
        return self._finish(state, stop, candidate, out, began)

    def _turn(self, state: _State) -> StopReason | None:
        """One turn: the acceptance check of a version right on the shown cases, a search round, or a step."""
        if self._check_if_right(state):
            return "repaired"
        left = self.config.limits.max_seconds - (time.monotonic() - state.guards.started)
        if left <= 0:
            return "time-budget"
        if (
            self.searching
            and len(state.searches) < self.config.max_search_rounds
            and (content_hash(state.source) not in state.searched)
        ):
            again = self._search(state, left)
            if state.accepted:
                return "repaired"
            if again:
                return None
            if self.model is None:  # the last round ran out of time with candidates left, or had none left
                return "time-budget" if state.searches[-1].stop_reason == "time budget" else "search-exhausted"
        stop = state.guards.before_call(len(state.steps), state.tokens.total) or state.guards.after_step()
        return stop or self.step(state)

    def step(self, state: _State) -> StopReason | None:
        """Ask the proposers for the next version from the current one, evaluate it, keep it or revert."""
        iteration = len(state.steps) + 1
        view, packed = self._view(state)
        chosen, proposal = self._propose(view)
        name = chosen.name if chosen is not None else self.name
        step = Step(
            iteration=iteration,
            model=name,
            action="",
            prompt_tokens_packed=packed.tokens,
            dropped_sections=packed.dropped,
        )
        self.transcript.write(
            "prompt",
            iteration=iteration,
            model=name,
            tokens=packed.tokens,
            budget=packed.budget,
            dropped=packed.dropped,
            reduced=packed.reduced,
            messages=[m.model_dump() for m in view.prompt],
        )
        state.feedback, state.instrumentation = [], []
        state.steps.append(step)
        if proposal is None:
            step.action, step.outcome = "no-edit", "the model has nothing more to propose"
            self.progress(step)
            return "model-exhausted"
        if proposal.kind == "model-error":
            step.action, step.outcome = "model-error", proposal.note
            self.transcript.write("model-error", iteration=iteration, error=proposal.note)
            self.progress(step)
            return "model-error"
        step.tokens = proposal.usage
        state.tokens = state.tokens + proposal.usage
        self.transcript.write(
            "reply",
            iteration=iteration,
            text=proposal.text,
            usage=proposal.usage.model_dump(),
            stop_reason=proposal.stop_reason,
        )
        if proposal.kind == "edit" and proposal.source is not None:
            self._try(state, step, proposal, recipe=isinstance(chosen, RecipeProposer))
        else:
            self._refuse(state, step, proposal)
        self.progress(step)
        return None

    # -- the parts of a step -----------------------------------------------------------------

    def _view(self, state: _State) -> tuple[RepairView, Any]:
        shown = self.config.diagnosis
        reference = shown_task(state.task, next(iter(state.visible), None))
        context = StepContext(
            reference=reference,
            kernel=state.source,
            diagnosis=state.diagnosis if shown else None,
            findings=findings(state.diagnosis, reference, state.source) if shown and self.config.findings else None,
            history=state.history,
            feedback=state.feedback,
            instrumentation=state.instrumentation,
            experience=self._experience(state.source, state.diagnosis),
        )
        messages, packed = build(context, self.config.prompt_budget)
        if self._memory is not None:
            self._memory.packed(packed)
        view = RepairView(
            source=state.source,
            prompt=messages,
            diagnosis=state.diagnosis if shown else None,
            recipes=self.config.recipes,
            tried=set(state.seen),
        )
        return view, packed

    def _propose(self, view: RepairView) -> tuple[Proposer[RepairView] | None, Proposal | None]:
        """The first proposal of the proposers, in order (recipes before the model when asked)."""
        for proposer in self.proposers:
            proposal = proposer.propose(view)
            if proposal is not None:
                return proposer, proposal
        return (self.proposers[-1] if self.proposers else None), None

    def _refuse(self, state: _State, step: Step, proposal: Proposal) -> None:
        """A reply without a new version: answer its requests, or tell the model why nothing changed."""
        if proposal.kind == "instrumentation":
            step.action = "instrumentation"
            results = [self.env.instrument(state.source, state.visible, r) for r in proposal.requests[:4]]
            state.instrumentation = results
            step.outcome = f"{len(results)} request(s) answered"
            self.transcript.write("instrumentation", iteration=step.iteration, results=results)
        elif proposal.kind == "edit-failed":
            step.action, step.outcome = "edit-failed", proposal.note
            state.feedback.append(f"Your edit did not apply: {proposal.note}. The current kernel is unchanged.")
        else:
            step.action, step.outcome = "no-edit", "no SEARCH/REPLACE block or python file in the reply"
            state.feedback.append(
                "Your reply had no edit. Answer with SEARCH/REPLACE blocks or the whole file in a ```python block."
            )
        state.guards.no_progress()

    def _try(self, state: _State, step: Step, proposal: Proposal, *, recipe: bool) -> None:
        """Evaluate an edited version: refuse a version seen before, keep it if no worse, else revert."""
        assert proposal.source is not None
        new_source, digest = proposal.source, content_hash(proposal.source)
        if digest in state.seen:
            step.action, step.outcome = "oscillation", "a version already tried"
            state.feedback.append(
                "That edit gives back a version of the kernel that was already evaluated; it was "
                "refused. Try something else."
            )
            state.guards.no_progress()
            return
        state.seen.add(digest)
        state.evaluations += 1
        step.action = "edit"
        diagnosis = self.env.diagnose(new_source, state.visible)
        assert diagnosis.evaluation is not None
        evaluation = diagnosis.evaluation
        score = version_score(evaluation)
        step.score, step.outcome = list(score), _describe(evaluation)
        self.transcript.write(
            "evaluation",
            iteration=step.iteration,
            source=new_source,
            evaluation=evaluation.model_dump(mode="json"),
            hypotheses=[h.model_dump() for h in diagnosis.hypotheses],
        )
        if self._memory is not None:
            self._memory.step(
                state.source,
                new_source,
                reply=proposal.text,
                result=evaluation,
                features=diagnosis.features.measured(),
                hypotheses=[h.pattern for h in state.diagnosis.hypotheses],
                recipe=recipe,
                tokens=(proposal.usage.prompt, proposal.usage.completion),
            )
        origin = " (a kope recipe)" if recipe and self.model is not None else ""
        state.history.append(f"attempt {step.iteration}{origin}: {step.outcome}")
        state.guards.failure(failure_key(evaluation))
        best = state.guards.best
        if state.guards.improved(score) or best is None or score <= best:
            state.best_source = state.source = new_source
            state.diagnosis = diagnosis
            return
        state.feedback.append(
            f"Your last change made things worse ({step.outcome}); it was reverted to the best version so far."
        )

    # -- acceptance and the offline search ------------------------------------------------------

    def _check_if_right(self, state: _State) -> bool:
        """A version right (or rejected) on the shown cases gets its full-coverage check, once."""
        if state.evaluation.status not in ("pass", "reject") or content_hash(state.source) in state.accept_checked:
            return False
        state.accept_checked.add(content_hash(state.source))
        if state.source != state.start and not self.env.right_at_own_size(state.source):
            # a version not checked there by a search round (one adopted from a round, or a model's): wrong at the
            # task's own sizes, where the derived cases cannot show its bug
            state.feedback.append(
                "The kernel is right on the derived cases but wrong at the task's own sizes: look for what only "
                "larger sizes reach (several blocks, loop trips, index overflow)."
            )
            self.transcript.write("own-size", source_hash=content_hash(state.source), right=False)
            return False
        if self._accept(state, state.source):
            return True
        state.diagnosis = self.env.diagnose(state.source, state.visible, sweep=True)
        state.ranked = state.ranked or [h.pattern for h in state.diagnosis.hypotheses]
        return False

    def _show_signal(self, state: _State) -> None:
        """A visible case whose reference output a kernel of zeros would match (`Case.low_signal`: a softmax over
        wide rows, a small loss) tells little of a wrong start, and a version right there may be right for no reason:
        the start's full check names the hidden cases it fails, the most elements wrong first, and the searches from
        it are shown those too (`_State.failed_hidden`)."""
        state.evaluations += 1
        full = self.env.evaluate(state.source, state.cases)
        hidden = [c for c in full.cases if not c.visible and c.shows_bug and c.outside is None]
        hidden.sort(key=lambda c: c.mismatch_fraction or 0.0, reverse=True)
        state.failed_hidden[content_hash(state.source)] = [c.name for c in hidden]
        self.transcript.write("low-signal", failed=[c.name for c in hidden])

    def _search(self, state: _State, seconds: float) -> bool:
        """One round of the offline search from the current version; adopt its best partial edit.
        True: look again (a new version to check or to search from)."""
        iteration, diagnosis = len(state.steps) + 1, state.diagnosis
        state.searched.add(content_hash(state.source))
        shown = list(state.visible)
        if diagnosis.fails_elsewhere:
            # Right on the shown cases, wrong on sizes the diagnosis swept: search on those too.
            shown += [
                Case(name=c.name, overrides=dict(c.overrides), visible=False)
                for c in diagnosis.cases
                if not c.passed and not c.visible and c.error_kind is None
            ][:2]
        # Wrong on hidden cases its full check ran that no sweep makes (larger magnitudes, shifted inputs): those too.
        named = {c.name: c for c in state.cases}
        failed = [named[n] for n in state.failed_hidden.get(content_hash(state.source), []) if n in named]
        known = {c.key() for c in shown}
        shown += [c for c in failed if c.key() not in known][:_FAILED_HIDDEN]
        known = {c.key() for c in shown}
        shown += [c for c in state.showing if c.key() not in known]

        def accept(source: str) -> bool:
            deadline = self.env.deadline
            late = deadline is not None and time.monotonic() >= deadline
            if late and state.late_check:
                return False  # the time budget is spent: no further full evaluation starts after it
            state.accept_checked.add(content_hash(source))
            if not late:
                return self._accept(state, source)
            # one version right on the shown cases as the budget ran out still gets its full check, with its full
            # time limit (like the final check: a run ends within the budget plus two evaluation timeouts)
            state.late_check = True
            self.env.deadline = None
            try:
                return self._accept(state, source)
            finally:
                self.env.deadline = deadline

        result = self.env.search(
            state.source,
            diagnosis,
            shown,
            accept,
            tried=state.seen,
            start_score=None if diagnosis.fails_elsewhere else version_score(state.evaluation),
            seconds=seconds,
            refused=state.refused,
            bases=state.bases,
        )
        state.searches.append(result)
        state.evaluations += result.evaluations
        refined = result.refined_case
        if refined is not None and refined.key() not in {c.key() for c in state.showing}:
            state.showing.append(refined)
        state.seen.update(content_hash(s) for s in (result.accepted, result.best) if s is not None)
        self.transcript.write("search", iteration=iteration, result=result.model_dump(mode="json"))
        step = Step(
            iteration=iteration,
            model="search",
            action="search",
            outcome=f"{result.evaluations} candidate(s) evaluated, {result.acceptance_checks} acceptance "
            f"check(s): {result.stop_reason}",
        )
        state.steps.append(step)
        self.progress(step)
        if state.accepted:
            return False
        state.feedback.append(result.summary())
        if result.slow is not None and result.best is None:
            return self._adopt_slow(state, result.slow)
        if result.best is not None:
            state.source = state.best_source = result.best
            state.guards.best = tuple(result.best_score or (2, 1.0, 0.0))  # type: ignore[assignment]
            state.history.append(f"kope's search: {result.best_description}")
            state.diagnosis = self.env.diagnose(state.source, [*state.visible, *state.showing])
            if state.evaluation.status in ("pass", "reject"):
                state.accept_checked.add(content_hash(state.source))
                state.diagnosis = self.env.diagnose(state.source, state.visible, sweep=True)
        again = content_hash(state.source) not in state.searched
        if not again and result.best is None and result.stop_reason in _ROUND_BUDGETS:
            # The round ran out of its own budget with candidates left: the next round goes on from the same version
            # (what this one evaluated is in `state.seen`, not evaluated again).
            state.searched.discard(content_hash(state.source))
            again = True
        return state.diagnosis.status in ("pass", "reject") or (
            again and len(state.searches) < self.config.max_search_rounds
        )

    def _adopt_slow(self, state: _State, source: str) -> bool:
        """A version that runs where the start stopped before it (its compile error mended) but ran out of the time
        limit: the cases are fitted to it (the start could not be timed), and the next round searches from it."""
        cases = self.env.refit(source)
        if cases is not None:
            state.cases = cases
            self.transcript.write("refit", fitted=self.env.fitted)
        state.source = source
        state.history.append("kope's search: a version that runs, slowly (the cases fitted to it)")
        state.diagnosis = self.env.diagnose(state.source, state.visible)
        return content_hash(state.source) not in state.searched and len(state.searches) < self.config.max_search_rounds

    def _accept(self, state: _State, source: str) -> bool:
        """Full coverage and the integrity gates: only then is a version repaired."""
        state.evaluations += 1
        full = self.env.evaluate(source, state.cases)
        deadline = self.env.deadline
        timed_out = full.error is not None and full.error.kind == "timeout"
        by_budget = timed_out and deadline is not None and time.monotonic() >= deadline - 1.0
        if by_budget and not state.late_check:
            # its run was cut at the budget's end, not at its own time limit: that says nothing of the version, which
            # gets the one check past the budget, with its full time limit (a run ends within the budget plus two
            # evaluation timeouts)
            state.late_check, by_budget = True, False
            full = self._check_again(state, source, full, "the time budget")
        if full.error is not None and full.error.kind == "timeout" and not by_budget and state.patience == 1.0:
            # its run outlived its own time limit: a slow kernel's full check (every case, several trials and the
            # gates) may need more than one evaluation's limit, which says nothing of its values; checked once more,
            # past the budget, with a longer limit (kept for the final check)
            state.patience = _PATIENCE
            full = self._check_again(state, source, full, "its own time limit")
        self.transcript.write("acceptance", evaluation=full.model_dump(mode="json"))
        if self._memory is not None:
            self._memory.accepted(source, full)
        if full.status == "pass":
            state.accepted = source
            return True
        if all(c.passed or c.outside is not None for c in full.cases) and full.integrity.verdict == "reject":
            state.rejected += 1
            state.feedback.append(
                f"The kernel is right on every case but the integrity gates rejected it "
                f"({shown_findings(full)}). Do the work in your own kernels."
            )
        else:
            hidden = [c for c in full.cases if not c.passed and not c.visible and c.outside is None]
            state.failed_hidden[content_hash(source)] = [c.name for c in hidden if c.shows_bug]
            kinds = sorted({c.error.kind if c.error else "wrong values" for c in hidden})
            state.feedback.append(
                f"The kernel is right on the case you are shown but fails {len(hidden)} hidden case(s) of other sizes "
                f"({', '.join(kinds)}). Make it correct for any size: masks, ceiling division, loops over blocks."
            )
        if state.guards.best is not None and state.guards.best[0] >= 1:
            state.guards.best = (1, 0.0, 0.0)
        return False

    def _check_again(self, state: _State, source: str, full: EvalResult, cut: str) -> EvalResult:
        """The full check once more, past the budget, with the run's patience; the transcript keeps the one that said
        nothing (`cut`: why)."""
        self.transcript.write("acceptance", evaluation=full.model_dump(mode="json"), cut=cut)
        deadline, self.env.deadline = self.env.deadline, None
        try:
            return self.env.evaluate(source, state.cases, patience=state.patience)
        finally:
            self.env.deadline = deadline

    def _finish(self, state: _State, stop: StopReason, candidate: str | Path, out: Path, began: float) -> DebugReport:
        """Write the returned version, check it once more on every case, report (and record) the run."""
        status: DebugStatus = "repaired" if state.accepted else ("rejected" if state.rejected else "unrepaired")
        if state.accepted is not None and state.accepted == state.start:
            status, stop = "pass", "already-right"
        final_source = state.accepted or state.best_source
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(final_source)
        self.env.deadline = None  # the final check runs with the full time limit: the one evaluation past the budget
        final = self.env.evaluate(final_source, state.cases, patience=state.patience)
        if status in ("repaired", "pass") and final.error is not None and final.error.kind == "timeout":
            # the version passed its full check, and this run outlived its time limit: that says nothing of its
            # values (a loaded machine, a fix slower than the start), so it runs once more with a longer limit
            self.transcript.write("final", evaluation=final.model_dump(mode="json"), cut="its own time limit")
            final = self.env.evaluate(final_source, state.cases, patience=state.patience * _PATIENCE)
        self.env.finish()
        if status in ("repaired", "pass") and final.status != "pass":
            # The accepted version failed its second full evaluation: its outputs depend on chance (a load
            # without a mask reading memory it does not own, a race), so it is not repaired.
            status, stop = "unrepaired", "unstable"
            self.transcript.write("unstable", evaluation=final.model_dump(mode="json"))
        report = DebugReport(
            status=status,
            iterations=len(state.steps),
            tokens=state.tokens,
            output=str(out),
            stop_reason=stop,
            task=str(state.task.path),
            candidate=str(candidate),
            model=self.name,
            transcript=str(self.transcript.path) if self.transcript.path else None,
            seconds=round(time.monotonic() - began, 3),
            steps=state.steps,
            rejected_versions=state.rejected,
            hypotheses=state.ranked,
            sandbox=final.sandbox,
            evaluations=state.evaluations,
            search=state.searches,
            final=FinalCheck.of(final),
            smaller_cases=self.env.fitted,
        )
        self.transcript.write("end", report=report.model_dump(mode="json", exclude={"steps"}))
        if self._memory is not None:
            self._memory.end(
                status=status,
                stop_reason=stop,
                tokens=(state.tokens.prompt, state.tokens.completion),
                accepted=state.accepted,
                best=final_source,
                hypotheses=state.ranked,
            )
        return report

    # -- the experience store (when one is given) -----------------------------------------

    def _recorder(self, task: Task, source: str, diagnosis: Diagnosis) -> DebugRecorder | None:
        if self.store is None:
            return None
        from kope.memory.recording import DebugRecorder

        recorder = DebugRecorder(
            self.store, task=task, model=self.name, device=self.config.options.device, knowledge=self.env.knowledge
        )
        assert diagnosis.evaluation is not None
        recorder.start(source, diagnosis.evaluation, diagnosis.features.measured(), [c.cue for c in diagnosis.cues])
        return recorder

    def _experience(self, source: str, diagnosis: Diagnosis) -> list[Any]:
        if self._memory is None or diagnosis.evaluation is None:
            return []
        return self._memory.sections(
            source,
            diagnosis.evaluation,
            diagnosis.features.measured(),
            "\n".join(diagnosis.summary().splitlines()[:8]),
            [h.pattern for h in diagnosis.hypotheses],
        )


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
    model: Model | None,
    *,
    out: Path,
    evaluator: Evaluator,
    config: DebugConfig | None = None,
    transcript: Path | None = None,
    progress: DebugProgress | None = None,
    store: ExperienceStore | None = None,
) -> DebugReport:
    """Repair `candidate` with `model` (None: offline); write the result to `out` and return the report
    (and record it in `store`)."""
    loop = DebugLoop(model, evaluator, config=config, transcript=transcript, progress=progress, store=store)
    return loop.run(task, candidate, out)
