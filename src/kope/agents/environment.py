"""Where the debug loop's versions run: the sandboxed evaluator and the diagnoser, or a scripted fake.

The loop only proposes and decides; everything that runs a candidate goes through an `Environment`:
evaluate a version on some cases, diagnose it, answer an instrumentation request, and (the real one)
run the offline repair search. `SandboxEnvironment` is kope's sandboxed evaluator and diagnoser;
`FakeEnvironment` answers from a script, in microseconds, so the loop's control (stops, budgets,
guards, transcript, best version, proposer order) is testable without spawning a sandbox — as a
deterministic model makes an agent testable without an API.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

from kope.agents.edits import Request
from kope.cases.task import Case, Task
from kope.diagnose.diagnoser import Diagnoser
from kope.diagnose.report import CaseDiagnosis, Diagnosis
from kope.evaluate import EvalOptions, Evaluator
from kope.knowledge.base import KnowledgeBase
from kope.knowledge.retrieval import Hypothesis
from kope.loop import Score
from kope.protocol import TraceSpec
from kope.protocol.results import CaseResult, EvalError, EvalResult, EvalStatus, Finding, Integrity
from kope.repair.search import Bases, Refused, RepairSearch, SearchConfig, SearchResult

Accept = Callable[[str], bool]

_PROBE_SHARE = 0.15
"""The share of the time left that a diagnosis's probes may take together in a session with a deadline: a kernel the
CPU interpreter runs slowly would spend a 300-s repair budget on probes at sizes past its blocks, before any edit."""
_FIT_SHARE = 0.03
"""The share of a session's time budget that the first case of one evaluation may take in the CPU interpreter: a
search of a hundred evaluations or more fits in the budget (`Evaluator.fit`)."""


class Environment(Protocol):
    knowledge: KnowledgeBase
    """The bug patterns the diagnosis ranks (a store adds its learned ones)."""
    can_search: bool
    """Whether `search` runs the offline repair search (the fake has none)."""
    deadline: float | None
    """`time.monotonic()` by which the loop's time budget runs out (None: no budget). Evaluations then get
    at most the time left (at least a second), so a run ends within its budget plus two evaluations (the final
    check, and one full check the loop lets past the budget)."""

    fitted: str | None
    """How `start` fitted the cases to the version it was given (derived again at a smaller element budget, as a
    note), or None."""

    def start(self, task: Task, out: Path, source: str | None = None) -> list[Case]:
        """Bind to `task` (scratch files next to `out`); the cases to evaluate on, visible and hidden. With
        `source`, cases the CPU interpreter would run too slowly for a session of many evaluations of that version
        are derived again smaller (`fitted` says so)."""

    def refit(self, source: str) -> list[Case] | None:
        """Once a run: the cases fitted to `source`, a version that runs where `start`'s stopped before it ran (no
        time to measure) or runs more slowly than the version they were fitted to (`fitted` says so); None where they
        stay as they are."""

    def evaluate(self, source: str, cases: Sequence[Case], *, patience: float = 1.0) -> EvalResult:
        """Every given case, with the integrity gates; `patience`: the run's time limit multiplied by it."""

    def right_at_own_size(self, source: str) -> bool:
        """False only where `source` is wrong at the task's own sizes (or the largest case that fits the budget): the
        check before acceptance that a search round gives its versions (`RepairSearch.own_size_case`)."""

    def diagnose(self, source: str, cases: Sequence[Case], *, sweep: bool = False) -> Diagnosis:
        """Evaluate and diagnose; `sweep`: right on `cases`, still try other sizes."""

    def instrument(self, source: str, cases: Sequence[Case], request: Request) -> str:
        """The answer to a model's TRACE or PROBE request, as text for its next prompt."""

    def search(
        self,
        source: str,
        diagnosis: Diagnosis,
        shown: Sequence[Case],
        accept: Accept,
        *,
        tried: set[str],
        start_score: Score | None,
        seconds: float | None = None,
        refused: Refused | None = None,
        bases: Bases | None = None,
    ) -> SearchResult:
        """One round of the offline repair search from `source` (kope.repair.search); `seconds`: the most
        it may take (the loop's time budget left), below the search's own limit; `refused`: the cases a version's
        failed acceptance check found wrong values on; `bases`: what the last round kept for the next one."""

    def finish(self) -> None:
        """Remove the scratch files."""


class SandboxEnvironment:
    """kope's sandboxed evaluator and diagnoser: every version runs in its own sandboxed job."""

    can_search = True

    def __init__(
        self,
        evaluator: Evaluator,
        knowledge: KnowledgeBase | None = None,
        *,
        options: EvalOptions | None = None,
        probes: bool = True,
        search: SearchConfig | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.diagnoser = Diagnoser(evaluator, knowledge)
        self.options = self._given = options or EvalOptions()
        self.fitted: str | None = None
        self.probes = probes
        self.search_config = search or SearchConfig()
        self.deadline: float | None = None
        self._task: Task | None = None
        self._work: Path | None = None
        self._fits = False
        """Whether the cases are kope's to fit (derived, not the caller's) and not refitted yet."""

    @property
    def knowledge(self) -> KnowledgeBase:
        return self.diagnoser.knowledge

    @knowledge.setter
    def knowledge(self, value: KnowledgeBase) -> None:
        self.diagnoser.knowledge = value

    def start(self, task: Task, out: Path, source: str | None = None) -> list[Case]:
        self._task, self._work = task, out.with_name(f".{out.name}.work.py")
        self.options, self.fitted = self._given, None
        self._fits = source is not None
        if source is not None:
            self._fit(source)
        return self.evaluator.cases(task, options=self.options)

    def refit(self, source: str) -> list[Case] | None:
        if not self._fits or self._task is None:
            return None  # the caller's own cases, or refitted already
        self._fits = False  # once a run
        before = self.options, self.fitted
        self._fit(source)
        if self.fitted is None:  # the version fits the cases as given: the ones in use stay, with their options
            self.options, self.fitted = before
            return None
        return self.evaluator.cases(self._task, options=self.options)

    def _fit(self, source: str) -> None:
        seconds = None if self.deadline is None else max(0.0, self.deadline - time.monotonic()) * _FIT_SHARE
        task, work = self._write(source)
        self.options, self.fitted = self.evaluator.fit(task, work, self._bounded(self._given), seconds=seconds)
        self.options = dataclasses.replace(self.options, timeout_s=self._given.timeout_s)

    def _write(self, source: str) -> tuple[Task, Path]:
        if self._task is None or self._work is None:
            raise RuntimeError("SandboxEnvironment.start(task, out) must come first")
        self._work.parent.mkdir(parents=True, exist_ok=True)
        self._work.write_text(source)
        return self._task, self._work

    def _bounded(self, options: EvalOptions) -> EvalOptions:
        """`options` with a run's time limit cut to the time left before the deadline (a second at least)."""
        if self.deadline is None:
            return options
        left = max(1.0, self.deadline - time.monotonic())
        return options if left >= options.timeout_s else dataclasses.replace(options, timeout_s=left)

    def evaluate(self, source: str, cases: Sequence[Case], *, patience: float = 1.0) -> EvalResult:
        task, work = self._write(source)
        options = self.options
        if patience != 1.0:
            options = dataclasses.replace(options, timeout_s=options.timeout_s * patience)
        return self.evaluator.evaluate(task, work, options=self._bounded(options), cases=cases)

    def diagnose(self, source: str, cases: Sequence[Case], *, sweep: bool = False) -> Diagnosis:
        task, work = self._write(source)
        probe_seconds = None if self.deadline is None else max(0.0, self.deadline - time.monotonic()) * _PROBE_SHARE
        return self.diagnoser.diagnose(
            task,
            work,
            options=self._bounded(self.options),
            cases=cases,
            probes=self.probes,
            sweep_if_passing=sweep,
            probe_seconds=probe_seconds,
        )

    def instrument(self, source: str, cases: Sequence[Case], request: Request) -> str:
        task, work = self._write(source)
        quick = self._bounded(
            EvalOptions(
                device=self.options.device,
                trials=1,
                integrity=False,
                sandbox=self.options.sandbox,
                tolerance=self.options.tolerance,
            )
        )
        if request.kind == "trace":
            spec = TraceSpec(kernel=request.kernel, line=request.line, pid=list(request.pid))
            traced = dataclasses.replace(quick, trace=spec)
            hits = self.evaluator.evaluate(task, work, options=traced, cases=cases[:1]).cases[0].trace or []
            if not hits:
                return f"TRACE {request.kernel} line {request.line} pid {request.pid}: never reached"
            lines = [f"TRACE {request.kernel} line {request.line}:"]
            for hit in hits[:4]:
                lines.append(f"program {tuple(hit.pid)}:")
                lines += [f"  {name} = {value}" for name, value in hit.variables.items()]
            return "\n".join(lines)
        diagnosis = self.diagnoser.diagnose(task, work, options=quick, cases=cases, probes=True)
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

    def search(
        self,
        source: str,
        diagnosis: Diagnosis,
        shown: Sequence[Case],
        accept: Accept,
        *,
        tried: set[str],
        start_score: Score | None,
        seconds: float | None = None,
        refused: Refused | None = None,
        bases: Bases | None = None,
    ) -> SearchResult:
        task, work = self._write(source)
        config = self.search_config
        if seconds is not None and seconds < config.max_seconds:
            config = dataclasses.replace(config, max_seconds=max(0.0, seconds))
        return RepairSearch(self.evaluator, config).run(
            task,
            source,
            diagnosis,
            list(shown),
            accept,
            scratch=work.parent / f".{work.stem}.search",
            options=self._bounded(self.options),
            tried=tried,
            start_score=start_score,
            refused=refused,
            bases=bases,
        )

    def right_at_own_size(self, source: str) -> bool:
        task, work = self._write(source)
        search = RepairSearch(self.evaluator, self.search_config)
        return search.right_at_own_size(task, source, self._bounded(self.options), work.parent / f".{work.stem}.own")

    def finish(self) -> None:
        if self._work is not None:
            self._work.unlink(missing_ok=True)


Verdict = Literal["pass", "reject", "error", "hidden"] | float
"""A scripted outcome: `pass`; `reject` (right, rejected by the gates); `error` (does not run);
`hidden` (right on the shown cases, wrong on the hidden ones); a float: wrong on every case, with
that fraction of elements wrong."""


class FakeEnvironment:
    """An environment that answers from a script instead of running anything.

    `script` maps a piece of source text to a verdict, or to a list of verdicts given one per
    evaluation (the last repeats): a version gets the verdict of the first key found in it, else
    `default`. Every evaluated version is appended to `evaluated`, for tests to count.
    """

    can_search = False
    deadline: float | None = None

    def __init__(
        self,
        script: Mapping[str, Verdict | Sequence[Verdict]],
        *,
        default: Verdict = 1.0,
        hypotheses: Sequence[Hypothesis] = (),
        visible: int = 1,
        hidden: int = 2,
    ) -> None:
        self.script = dict(script)
        self.default = default
        self.hypotheses = list(hypotheses)
        self.knowledge = KnowledgeBase([])
        self.cases = [
            Case(name=f"N={i + 1}", overrides={"N": i + 1}, visible=i < visible) for i in range(visible + hidden)
        ]
        self.evaluated: list[str] = []
        self.fitted: str | None = None
        self.instrumented: list[Request] = []
        self._uses: dict[str, int] = {}

    def start(self, task: Task, out: Path, source: str | None = None) -> list[Case]:
        return list(self.cases)

    def refit(self, source: str) -> list[Case] | None:
        return None

    def right_at_own_size(self, source: str) -> bool:
        return True

    def verdict(self, source: str) -> Verdict:
        for key, value in self.script.items():
            if key in source:
                if isinstance(value, (str, int, float)):
                    return value
                used = self._uses[key] = self._uses.get(key, -1) + 1
                return value[min(used, len(value) - 1)]
        return self.default

    def evaluate(self, source: str, cases: Sequence[Case], *, patience: float = 1.0) -> EvalResult:
        self.evaluated.append(source)
        verdict = self.verdict(source)
        results = [_case_result(case, verdict) for case in cases]
        status: EvalStatus = "error" if verdict == "error" else "fail" if not all(c.passed for c in results) else "pass"
        integrity = Integrity(checked=True)
        if verdict == "reject" and status == "pass":
            status = "reject"
            integrity = Integrity(
                verdict="reject",
                checked=True,
                findings=[Finding(rule="torch-compute", severity="reject", message="scripted rejection")],
            )
        error = EvalError(kind="runtime", message="scripted error") if verdict == "error" else None
        return EvalResult(
            status=status,
            error=error,
            cases=results,
            integrity=integrity,
            cases_run="selected",
            task="fake-task",
            candidate="fake-candidate",
            device="cpu",
            seed=0,
        )

    def diagnose(self, source: str, cases: Sequence[Case], *, sweep: bool = False) -> Diagnosis:
        shown = list(cases)
        if sweep and self.verdict(source) == "hidden":
            shown += [c for c in self.cases if not c.visible][:1]
        result = self.evaluate(source, shown)
        return Diagnosis(
            status=result.status,
            task=result.task,
            candidate=result.candidate,
            evaluation=result,
            hypotheses=list(self.hypotheses) if result.status == "fail" else [],
            cases=[
                CaseDiagnosis(
                    name=c.name,
                    visible=c.visible,
                    overrides=dict(c.overrides),
                    passed=c.passed,
                    error_kind=c.error.kind if c.error else None,
                )
                for c in result.cases
            ],
        )

    def instrument(self, source: str, cases: Sequence[Case], request: Request) -> str:
        self.instrumented.append(request)
        return f"PROBE {request.kind}: scripted answer"

    def search(
        self,
        source: str,
        diagnosis: Diagnosis,
        shown: Sequence[Case],
        accept: Accept,
        *,
        tried: set[str],
        start_score: Score | None,
        seconds: float | None = None,
        refused: Refused | None = None,
    ) -> SearchResult:
        raise NotImplementedError("the fake environment has no repair search (can_search is False)")

    def finish(self) -> None:
        return None


def _case_result(case: Case, verdict: Verdict) -> CaseResult:
    base = CaseResult(
        name=case.name,
        overrides=dict(case.overrides),
        visible=case.visible,
        passed=True,
        max_abs_err=0.0,
        max_rel_err=0.0,
        mismatch_fraction=0.0,
        mismatch_count=0,
        numel=1000,
        trials=1,
    )
    if verdict == "error":
        return base.model_copy(update={"passed": False, "error": EvalError(kind="runtime", message="scripted error")})
    wrong = float(verdict) if not isinstance(verdict, str) else 0.5 if verdict == "hidden" and not case.visible else 0.0
    if wrong:
        return base.model_copy(
            update={
                "passed": False,
                "mismatch_fraction": wrong,
                "max_rel_err": wrong,
                "mismatch_count": round(wrong * 1000),
                "max_abs_err": wrong,
            }
        )
    return base
