"""Run a strategy (debug or regenerate) over a near-miss suite: parallel, resumable, one row per attempt.

    jobs = cases × arms × samples ──► worker processes (each owns an Evaluator) ──► attempts.jsonl

An *arm* is the full system (`none`) or an ablation: `kb` (an empty knowledge base), `diagnosis`
(no diagnosis in the prompt or the hints), `integrity` (gates off when accepting; what they would
have rejected is counted), `recipes` (no recipes), `memory` (no experience store); `kb+recipes`
combines two. With `memory=True` every arm but `memory` records into, and draws from, one experience
store in the results directory (`memory.db`, shared by the workers), as `kope debug` does with the
user's store; without it no arm has a store, and a `memory` arm runs the full system and says so. Rows are appended as
attempts finish; a rerun into the same directory skips every (case, strategy, arm, sample, model)
that already has a row.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from kope.agents.debug import DebugConfig, DebugLoop
from kope.agents.regenerate import regenerate
from kope.bench.corpus import Suite, SuiteEntry
from kope.cases.task import Task
from kope.errors import KopeError
from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.runner import Runner
from kope.executors import Executor, LocalExecutor
from kope.knowledge.base import KnowledgeBase
from kope.loop import LoopLimits
from kope.memory.store import ExperienceStore
from kope.models import load_model
from kope.models.base import Model
from kope.protocol.results import EvalResult
from kope.protocol.sandbox import SandboxReport

Strategy = Literal["debug", "regenerate"]
ABLATIONS = ("kb", "diagnosis", "integrity", "memory", "recipes")
ATTEMPTS = "attempts.jsonl"
RUNS = "runs.jsonl"
MEMORY_DB = "memory.db"
MEMORY_NOTE = "memory: this run has no experience store (memory off), so this arm runs the full system"
NEEDS_MODEL = "needs-model"


class BenchError(KopeError):
    """A harness argument is invalid (unknown ablation, strategy, or suite)."""


class Attempt(BaseModel):
    """One attempt at one case: a row of attempts.jsonl."""

    case: str
    label: str
    operator: str | None = None
    task: str
    strategy: str
    arm: str
    """`none` (the full system) or the ablations, joined by `+`."""
    sample: int
    model: str
    outcome: str
    """debug: repaired, unrepaired, rejected; regenerate: pass, fail, reject, error, no-code, model-error;
    needs-model (the model cannot do this strategy) or harness-error."""
    passed: bool = False
    """Right on every case and clean for the integrity gates (the honest success)."""
    accepted: bool = False
    """What the workflow itself accepted (with the `integrity` ablation: without the gates)."""
    numerically_right: bool = False
    integrity_rejected: bool = False
    """Numerically right on every case, rejected by the integrity gates."""
    rejected_versions: int = 0
    tokens_prompt: int = 0
    tokens_completion: int = 0
    tokens: int = 0
    iterations: int = 0
    stop_reason: str = ""
    hypotheses: list[str] = Field(default_factory=list)
    """The diagnosis's ranked pattern ids (top 5), for accuracy against `label`."""
    wall_s: float = 0.0
    """The strategy itself (the debug loop, or one regenerated sample)."""
    eval_s: float = 0.0
    """Time inside evaluations, the loop's and the harness's own check."""
    check_s: float = 0.0
    """The harness's own evaluation with the gates on (the `integrity` arm only)."""
    job_s: float = 0.0
    """The whole job in its worker: model set-up, the strategy, checks, bookkeeping."""
    note: str = ""
    error: str | None = None
    output: str | None = None
    finished: str = ""
    sandbox: SandboxReport | None = None
    """What protected the candidate's runs (the final evaluation of a debug attempt)."""

    def key(self) -> tuple[str, str, str, int, str]:
        return (self.case, self.strategy, self.arm, self.sample, self.model)


@dataclass(frozen=True)
class Job:
    entry: SuiteEntry
    task: str
    candidate: str
    strategy: str
    arm: str
    sample: int
    model: str
    out_dir: str
    options: EvalOptions
    limits: LoopLimits
    probes: bool = True
    store: str | None = None
    """The run's experience store (a SQLite file or SQLAlchemy URL); None: no memory."""

    def key(self) -> tuple[str, str, str, int, str]:
        return (self.entry.id, self.strategy, self.arm, self.sample, self.model)


def parse_arms(ablate: Sequence[str], *, baseline: bool = True) -> list[str]:
    """Arms from `--ablate` values (comma-separated; `a+b` combines), the full system first."""
    arms = ["none"] if baseline else []
    for value in ablate:
        for arm in (part.strip() for part in value.split(",")):
            if not arm:
                continue
            parts = sorted(set(arm.split("+")))
            unknown = [p for p in parts if p not in ABLATIONS and p != "none"]
            if unknown:
                raise BenchError(f"unknown ablation {', '.join(unknown)}; use {', '.join(ABLATIONS)} (a+b combines)")
            name = "+".join(p for p in parts if p != "none") or "none"
            if name not in arms:
                arms.append(name)
    if not arms:
        raise BenchError("no arm to run: give --ablate or keep the baseline")
    return arms


def ablations(arm: str) -> set[str]:
    return set() if arm == "none" else set(arm.split("+"))


# -- the worker side ----------------------------------------------------------------------------


class TimedEvaluator(Evaluator):
    """An Evaluator that adds up the time spent in `evaluate`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._seconds = 0.0
        self._time_lock = threading.Lock()

    def evaluate(self, task: Task | str | Path, candidate: str | Path, **kwargs: Any) -> EvalResult:
        began = time.monotonic()
        try:
            return super().evaluate(task, candidate, **kwargs)
        finally:
            with self._time_lock:
                self._seconds += time.monotonic() - began

    def take_seconds(self) -> float:
        with self._time_lock:
            seconds, self._seconds = self._seconds, 0.0
        return seconds


ModelFactory = Callable[[str], Model | None]


def default_model_factory(spec: str) -> Model | None:
    return load_model(spec)


class Worker:
    """Runs jobs one at a time with its own evaluator and knowledge base."""

    def __init__(
        self,
        cache_dir: Path | None,
        max_parallel: int,
        model_factory: ModelFactory | None = None,
        runner: Runner | None = None,
    ) -> None:
        self.evaluator = TimedEvaluator(cache_dir=cache_dir, max_parallel=max_parallel, runner=runner or "fork")
        self.knowledge = KnowledgeBase.load()
        self.model_factory = model_factory or default_model_factory
        self._stores: dict[str, ExperienceStore] = {}

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores.clear()
        self.evaluator.close()

    def store(self, job: Job) -> ExperienceStore | None:
        """The job's experience store, opened once per worker; None without memory or in the `memory` arm."""
        if job.store is None or "memory" in ablations(job.arm):
            return None
        if job.store not in self._stores:
            self._stores[job.store] = ExperienceStore.open(job.store)
        return self._stores[job.store]

    def run(self, job: Job) -> Attempt:
        began = time.monotonic()
        self.evaluator.take_seconds()
        entry = job.entry
        row = Attempt(
            case=entry.id,
            label=entry.label,
            operator=entry.operator,
            task=entry.task,
            strategy=job.strategy,
            arm=job.arm,
            sample=job.sample,
            model=job.model,
            outcome="harness-error",
        )
        try:
            if job.strategy == "debug":
                self._debug(job, row)
            else:
                self._regenerate(job, row)
        except Exception as exc:  # one broken job must not end a long run: it becomes a row saying why
            row.outcome, row.error = "harness-error", f"{type(exc).__name__}: {exc}"
        if "memory" in ablations(job.arm) and job.store is None:
            row.note = "; ".join(n for n in (row.note, MEMORY_NOTE) if n)
        row.tokens = row.tokens_prompt + row.tokens_completion
        row.eval_s = round(self.evaluator.take_seconds(), 4)
        row.job_s = round(time.monotonic() - began, 4)
        row.finished = time.strftime("%Y-%m-%dT%H:%M:%S")
        return row

    def _options(self, job: Job) -> EvalOptions:
        return replace(job.options, integrity=False) if "integrity" in ablations(job.arm) else job.options

    def _debug(self, job: Job, row: Attempt) -> None:
        off = ablations(job.arm)
        config = DebugConfig(
            limits=job.limits,
            options=self._options(job),
            probes=job.probes and "diagnosis" not in off,
            diagnosis="diagnosis" not in off,
            recipes="recipes" not in off,
        )
        knowledge = KnowledgeBase([]) if "kb" in off else self.knowledge
        out_dir = Path(job.out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        model = self.model_factory(job.model)
        loop = DebugLoop(
            model,
            self.evaluator,
            knowledge=knowledge,
            config=config,
            transcript=out_dir / "transcript.jsonl",
            store=self.store(job),
        )
        started = time.monotonic()
        report = loop.run(job.task, job.candidate, out_dir / "out.py")
        row.wall_s = round(time.monotonic() - started, 4)
        final = report.final
        row.outcome, row.stop_reason, row.iterations = report.status, report.stop_reason, report.iterations
        row.tokens_prompt, row.tokens_completion = report.tokens.prompt, report.tokens.completion
        row.hypotheses = report.hypotheses[:5]
        row.rejected_versions = report.rejected_versions
        row.output = report.output
        row.sandbox = report.sandbox
        row.numerically_right = final.status != "error" and final.cases_passed == final.cases
        row.accepted = report.status in ("repaired", "pass")  # a mutant right as injected ends right too
        if "integrity" in off:
            verdict = self._gates(job, Path(report.output or out_dir / "out.py"), row) if row.numerically_right else ""
            row.passed = row.numerically_right and verdict == "clean"
            row.integrity_rejected = row.numerically_right and verdict == "reject"
        else:
            row.passed = final.status == "pass"
            row.integrity_rejected = row.numerically_right and final.status == "reject"

    def _gates(self, job: Job, path: Path, row: Attempt) -> str:
        """The verdict on a version with the gates on (for the `integrity` arm): clean, reject, fail or error."""
        started = time.monotonic()
        checked = self.evaluator.evaluate(job.task, path, options=job.options)
        row.check_s = round(time.monotonic() - started, 4)
        return {"pass": "clean"}.get(checked.status, checked.status)

    def _regenerate(self, job: Job, row: Attempt) -> None:
        model = self.model_factory(job.model)
        out_dir = Path(job.out_dir)
        started = time.monotonic()
        report = regenerate(
            job.task,
            model,
            k=1,
            out_dir=out_dir,
            evaluator=self.evaluator,
            options=self._options(job),
            transcript=out_dir / "transcript.jsonl",
        )
        row.wall_s = round(time.monotonic() - started, 4)
        if not report.samples:
            row.outcome, row.note = NEEDS_MODEL, report.note
            return
        sample = report.samples[0]
        row.outcome, row.stop_reason = sample.status, sample.detail[:200]
        row.iterations = 1
        row.tokens_prompt, row.tokens_completion = sample.tokens.prompt, sample.tokens.completion
        row.numerically_right = sample.numerically_right
        row.sandbox = sample.sandbox
        row.accepted = sample.status == "pass"
        row.output = sample.path
        gate_verdict = "reject" if sample.status == "reject" else "clean"
        if "integrity" in ablations(job.arm) and sample.numerically_right and sample.path:
            gate_verdict = self._gates(job, Path(sample.path), row)
        row.integrity_rejected = sample.numerically_right and gate_verdict == "reject"
        row.passed = sample.numerically_right and gate_verdict == "clean"


# -- the parent side ----------------------------------------------------------------------------


def read_attempts(path: Path) -> list[Attempt]:
    """The rows of an attempts file (or of RESULTS/attempts.jsonl); unreadable lines are skipped."""
    file = path / ATTEMPTS if path.is_dir() else path
    rows: list[Attempt] = []
    if not file.is_file():
        return rows
    for line in file.read_text().splitlines():
        if not line.strip():
            continue
        try:
            rows.append(Attempt.model_validate_json(line))
        except ValidationError:
            continue
    return rows


def read_runs(path: Path) -> list[dict[str, Any]]:
    file = (path if path.is_dir() else path.parent) / RUNS
    if not file.is_file():
        return []
    runs = []
    for line in file.read_text().splitlines():
        try:
            runs.append(json.loads(line))
        except ValueError:
            continue
    return runs


@dataclass
class RunSummary:
    out: Path
    jobs: int
    skipped: int
    ran: int
    seconds: float
    rows: list[Attempt] = field(default_factory=list)
    """The rows this run added."""
    parent_s: float = 0.0
    """The parent's own bookkeeping (planning, resume, writing rows)."""


def plan_jobs(
    suite: Suite,
    *,
    strategy: Strategy,
    model: str,
    arms: Sequence[str],
    samples: int,
    out: Path,
    options: EvalOptions,
    limits: LoopLimits,
    limit: int | None = None,
    every: int = 1,
    probes: bool = True,
    store: str | None = None,
) -> list[Job]:
    entries = select(suite.entries, limit=limit, every=every)
    jobs = []
    for entry in entries:
        for arm in arms:
            for sample in range(samples):
                digest = hashlib.sha256(entry.id.encode()).hexdigest()[:12]
                out_dir = out / "outputs" / f"{strategy}-{arm}" / f"{digest}-{sample}"
                jobs.append(
                    Job(
                        entry=entry,
                        task=str(suite.task_path(entry)),
                        candidate=str(suite.candidate_path(entry)),
                        strategy=strategy,
                        arm=arm,
                        sample=sample,
                        model=model,
                        out_dir=str(out_dir),
                        options=options,
                        limits=limits,
                        probes=probes,
                        store=store,
                    )
                )
    return jobs


def select(entries: Sequence[SuiteEntry], *, limit: int | None = None, every: int = 1) -> list[SuiteEntry]:
    """Every `every`-th case of each taxonomy id (manifest order), then the first `limit` of those."""
    position: dict[str, int] = {}
    chosen = []
    for entry in entries:
        index = position.get(entry.label, 0)
        position[entry.label] = index + 1
        if index % max(1, every) == 0:
            chosen.append(entry)
    return chosen[:limit] if limit else chosen


def machine() -> dict[str, Any]:
    import torch
    import triton

    return {
        "node": platform.node(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
    }


def run_bench(
    suite: Suite,
    *,
    strategy: Strategy,
    model: str,
    out: Path,
    arms: Sequence[str] = ("none",),
    samples: int = 1,
    workers: int = 1,
    limit: int | None = None,
    every: int = 1,
    options: EvalOptions | None = None,
    limits: LoopLimits | None = None,
    cache_dir: Path | None = None,
    model_factory: ModelFactory | None = None,
    progress: Callable[[Attempt, int, int], None] | None = None,
    evaluator: Evaluator | None = None,
    probes: bool = True,
    memory: bool = False,
    executor: Executor | None = None,
) -> RunSummary:
    """Run every job not already in `out/attempts.jsonl`; rows are appended as they finish.

    With `memory`, debug attempts record into and draw from `out/memory.db` (except in the `memory` arm).

    `workers` > 1 runs jobs in that many processes, each with its own evaluator; otherwise they run
    here, sharing `evaluator`'s sandbox (fork server) and reference cache when one is given.
    `executor` (kope.executors, e.g. Ray) runs them elsewhere instead, one worker per process there.
    """
    if strategy not in ("debug", "regenerate"):
        raise BenchError(f"unknown strategy {strategy!r}: use debug or regenerate")
    began = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    options = options or EvalOptions()
    limits = limits or LoopLimits()
    store = str(out.resolve() / MEMORY_DB) if memory else None
    jobs = plan_jobs(
        suite,
        strategy=strategy,
        model=model,
        arms=arms,
        samples=max(1, samples),
        out=out,
        options=options,
        limits=limits,
        limit=limit,
        every=every,
        probes=probes,
        store=store,
    )
    done = {row.key() for row in read_attempts(out)}
    todo = [job for job in jobs if job.key() not in done]
    summary = RunSummary(out=out, jobs=len(jobs), skipped=len(jobs) - len(todo), ran=0, seconds=0.0)
    attempts_file = out / ATTEMPTS
    parent = time.monotonic() - began

    def record(row: Attempt) -> None:
        nonlocal parent
        started = time.monotonic()
        with attempts_file.open("a") as handle:
            handle.write(row.model_dump_json() + "\n")
        summary.rows.append(row)
        summary.ran += 1
        parent += time.monotonic() - started
        if progress is not None:
            progress(row, summary.ran, len(todo))

    if evaluator is not None and cache_dir is None:
        cache_dir = evaluator.cache.root
    runner = evaluator.runner if evaluator is not None and workers <= 1 else None
    for row in _execute(
        todo, workers=workers, cache_dir=cache_dir, model_factory=model_factory, runner=runner, executor=executor
    ):
        record(row)
    summary.seconds = round(time.monotonic() - began, 3)
    summary.parent_s = round(parent, 3)
    run = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - summary.seconds)),
        "seconds": summary.seconds,
        "parent_s": summary.parent_s,
        "workers": workers,
        "strategy": strategy,
        "model": model,
        "arms": list(arms),
        "samples": samples,
        "limit": limit,
        "every": every,
        "probes": probes,
        "memory": memory,
        "suite": str(suite.root),
        "jobs": summary.jobs,
        "skipped": summary.skipped,
        "ran": summary.ran,
        "jobs_s": round(sum(row.job_s for row in summary.rows), 3),
        "trials": options.trials,
        "device": options.device,
        "machine": machine(),
    }
    with (out / RUNS).open("a") as handle:
        handle.write(json.dumps(run) + "\n")
    return summary


def _execute(
    jobs: list[Job],
    *,
    workers: int,
    cache_dir: Path | None,
    model_factory: ModelFactory | None,
    runner: Runner | None = None,
    executor: Executor | None = None,
) -> Iterator[Attempt]:
    if not jobs:
        return
    owned = executor is None
    executor = executor or LocalExecutor(workers)
    in_process = isinstance(executor, LocalExecutor) and executor.workers <= 1
    factory = functools.partial(
        Worker, cache_dir, 2 if in_process else 1, model_factory, runner if in_process else None
    )
    try:
        yield from executor.map(factory, jobs)
    finally:
        if owned:
            executor.close()
