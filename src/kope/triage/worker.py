"""One candidate's triage: evaluate on full coverage with the gates, classify, repair a near miss (or a broken
kernel that breaks a rule of Triton's API that kope can mend: kope.bugs.api).

    pass              right on every case, clean for the gates
    near-miss         runs, wrong values (the kind the debug loop repairs), gate findings or not: a
                      wrong kernel that also trips a gate keeps its findings on the row, and its
                      repair is judged by the gates like any other
    broken            does not run: the row says the error kind (syntax, import, runtime, timeout...)
    cheat             right values for the wrong reason: rejected by the integrity gates
    unsupported-here  kope cannot judge it on this machine: the evaluator's error kind `unsupported`
                      (inline PTX, a CUDA C++ extension, torch.compile under CPU emulation), or a
                      failure that a platform limit accounts for (`limits`: bf16 `tl.dot` in the
                      Triton interpreter, TF32 `tl.dot`); never repaired

The worker owns one evaluator (fork server, reference cache) for all the jobs it is given, in
whichever process the executor runs it. A job carries the task and the candidate as text, with their
names; the worker writes them into a scratch folder of its own and sends back, in the row, the files it
made for the results folder (`TriageRow.files`), which the head writes: a worker needs no file system
shared with the head (a Ray worker on another machine). Repairs go through the debug loop's public API;
with an experience store, each repair is recorded in one atomic block keyed by the run and the candidate,
so a retried job writes nothing twice and a killed one writes nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import socket
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, Field

from kope.agents.debug import DebugConfig, DebugLoop, DebugReport
from kope.bugs import Program, edits, kind
from kope.diagnose.diagnoser import Diagnoser
from kope.evaluate import EvalOptions, Evaluator, judging
from kope.knowledge.base import KnowledgeBase
from kope.loop import LoopLimits
from kope.memory.store import ExperienceStore
from kope.models import load_model
from kope.protocol.results import EvalResult, ProfileDisagreement
from kope.triage.layout import Item

Klass = Literal["pass", "near-miss", "broken", "cheat", "unsupported-here"]
CLASSES: tuple[str, ...] = get_args(Klass)


def classify(status: str, error_kind: str | None = None, limits: Sequence[str] = ()) -> Klass:
    """The class of an evaluation: pass, fail (near-miss), reject (cheat: right values, rejected), error
    (broken); `unsupported-here` for what cannot run on this machine (error kinds `unsupported` and
    `interpreter`), or a failure a platform limit explains."""
    if (status == "error" and error_kind in ("unsupported", "interpreter")) or (status == "fail" and limits):
        return "unsupported-here"
    return {"pass": "pass", "fail": "near-miss", "reject": "cheat"}.get(status, "broken")  # type: ignore[return-value]


MENDABLE_ERRORS = ("runtime", "load", "import", "shape")
"""Error kinds of a broken kernel that an edit of its source can mend (not a timeout, a crash or a platform limit)."""


def mendable(row: TriageRow, source: str) -> bool:
    """Whether triage repairs a broken row: it stopped on an error its source can mend, and kope has a grounded edit
    for what breaks it (kope.bugs.api: a runtime block where Triton needs a constant, an autotuned meta-parameter
    passed again, a module never imported) or it is right up to its output's shape."""
    if row.before != "broken" or row.error_kind not in MENDABLE_ERRORS:
        return False
    if row.error_kind == "shape":
        return True
    program = Program.parse(source, error=row.error_message or "")  # the compiler's message: `carried-type`
    return program is not None and bool(edits(program, list(kind("api").edits)))


def slug(ident: str) -> str:
    """A file name for a candidate id (its relative path): folders joined by `__`, no `.py`.

    Distinct ids get distinct names: where the plain name would not map back to one id (a character
    replaced, a `_` beside a folder separator, `__` in the id itself), a hash of the id is appended."""
    stem = ident[:-3] if ident.endswith(".py") else ident
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem.replace("/", "__"))
    parts = stem.split("/")
    faithful = (
        all(c.isalnum() or c in "-_./" for c in stem)
        and "__" not in stem
        and not any(part.startswith("_") or part.endswith("_") for part in parts[1:] + parts[:-1])
    )
    return name if faithful else f"{name}-{hashlib.sha256(ident.encode()).hexdigest()[:8]}"


class TriageRow(BaseModel):
    """One candidate's outcome: a row of results.jsonl."""

    id: str
    problem: str
    task: str
    candidate: str
    before: Klass | Literal["error"]
    """The class on full coverage; `error` when kope itself failed on it (see `error`)."""
    after: Klass | Literal["error"]
    status: str = ""
    error_kind: str | None = None
    error_message: str | None = None
    cases_passed: int = 0
    cases: int = 0
    findings: list[str] = Field(default_factory=list)
    """The integrity rules that rejected it (a cheat; or a near miss whose values are also wrong), or warned."""
    tolerance_profile: str | None = None
    """The tolerance profile it was judged with (strict, kernelbench)."""
    module_mode: str | None = None
    """The mode both models ran in (`train`, `eval`: a manifest's `module_mode`, else `--module-mode`)."""
    profile_disagreement: ProfileDisagreement | None = None
    """The profiles disagree on it (pass under one, fail under the other), with the error measured."""
    limits: list[str] = Field(default_factory=list)
    """Platform limits that account for its failure (then the class is unsupported-here)."""
    notes: list[str] = Field(default_factory=list)
    """What the comparison noticed (a shape-only difference and the fix that makes it right)."""
    emulation: str | None = None
    """"CUDA emulated on the CPU interpreter" when its verdict was made so (`EvalResult.emulation`)."""
    low_signal: str | None = None
    """Why the task's own inputs say little (`EvalResult.low_signal`): copies were judged on a widened case."""
    heatmap: str | None = None
    """Where its first failing output is wrong (PNG, relative to the results folder)."""
    repair: str = "none"
    """none (not repaired: neither a near miss nor a mendable broken kernel), repaired, pass (the repair found it
    right as given), unrepaired, rejected, skipped (a budget was spent), error."""
    stop_reason: str = ""
    iterations: int = 0
    tokens_prompt: int = 0
    tokens_completion: int = 0
    repair_s: float = 0.0
    repaired: str | None = None
    """The repaired kernel (relative to the results folder)."""
    diff: str = ""
    """Candidate → repaired kernel (unified diff)."""
    eval_s: float = 0.0
    job_s: float = 0.0
    store: str | None = None
    """What the experience store got: recorded, duplicate (a retry of a committed job), or none."""
    worker: str = ""
    error: str | None = None
    finished: str = ""
    files: dict[str, bytes] = Field(default_factory=dict, exclude=True)
    """What the worker made for the results folder (the heatmap, the repaired kernel, the repair's work
    folder), by path relative to it; the head writes them (`save_files`), results.jsonl does not hold them."""

    @property
    def tokens(self) -> int:
        return self.tokens_prompt + self.tokens_completion

    def save_files(self, out: Path) -> None:
        """Write the files the worker sent into the results folder `out` (each path stays inside it)."""
        root = out.resolve()
        for relative, data in self.files.items():
            target = (root / relative).resolve()
            if not target.is_relative_to(root):
                raise ValueError(f"a triage worker sent a file outside the results folder: {relative}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


@dataclass(frozen=True)
class TriageJob:
    item: Item
    """The candidate's id and names (`item.task` and `item.candidate` name the files; nothing reads them)."""
    task_text: str | None
    """The task file's text, read by the head (None: it could not read it; the row says so)."""
    candidate_text: str | None
    options: EvalOptions
    model: str = "offline"
    limits: LoopLimits = field(default_factory=LoopLimits)
    repair: bool = True
    skip_reason: str = ""
    store: str | None = None
    store_key: str = ""
    probes: bool = False


@dataclass(frozen=True)
class WorkerSpec:
    """Builds a TriageWorker (picklable: what the executors send to their processes)."""

    cache_dir: str | None = None
    max_parallel: int = 2

    def __call__(self) -> TriageWorker:
        return TriageWorker(Path(self.cache_dir) if self.cache_dir else None, self.max_parallel)


class TriageWorker:
    def __init__(self, cache_dir: Path | None = None, max_parallel: int = 2) -> None:
        self.evaluator = Evaluator(cache_dir=cache_dir, max_parallel=max_parallel)
        self.knowledge = KnowledgeBase.load()
        self._stores: dict[str, ExperienceStore] = {}
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores.clear()
        self.evaluator.close()

    def _store(self, url: str) -> ExperienceStore:
        if url not in self._stores:
            self._stores[url] = ExperienceStore.open(url)
        return self._stores[url]

    def run(self, job: TriageJob) -> TriageRow:
        began = time.monotonic()
        item = job.item
        row = TriageRow(
            id=item.id,
            problem=item.problem,
            task=item.task,
            candidate=item.candidate,
            before="error",
            after="error",
            worker=self.name,
        )
        try:
            with tempfile.TemporaryDirectory(prefix="kope-triage-") as scratch:
                try:
                    self._triage(job, row, Path(scratch))
                finally:
                    row.files = _files_under(Path(scratch) / "out")
        except Exception as exc:  # one candidate that breaks kope must not end the run: its row says why
            row.error = f"{type(exc).__name__}: {exc}"
        row.job_s = round(time.monotonic() - began, 3)
        row.finished = time.strftime("%Y-%m-%dT%H:%M:%S")
        return row

    def _triage(self, job: TriageJob, row: TriageRow, scratch: Path) -> None:
        """`scratch`: this job's own folder; what its `out` holds at the end goes to the results folder."""
        task, candidate = _materialise(scratch / "inputs", job)
        name = slug(job.item.id)
        out = scratch / "out"
        heatmap = out / "heatmaps" / f"{name}.png"
        heatmap.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        diagnosis = Diagnoser(self.evaluator, self.knowledge).diagnose(
            task, candidate, options=job.options, probes=False, plot=heatmap
        )
        row.eval_s = round(time.monotonic() - started, 3)
        result = diagnosis.evaluation
        if result is None:
            raise RuntimeError(diagnosis.error or "the diagnosis returned no evaluation")
        self._describe(result, row)
        row.before = row.after = classify(result.status, row.error_kind, result.limits)
        if heatmap.is_file():
            row.heatmap = str(heatmap.relative_to(out))
        if row.before != "near-miss" and not mendable(row, candidate.read_text()):
            return
        if not job.repair:
            row.repair, row.stop_reason = "skipped", job.skip_reason
            return
        self._repair(job, row, out, name, (task, candidate))

    @staticmethod
    def _describe(result: EvalResult, row: TriageRow) -> None:
        row.status = result.status
        row.error_kind = result.error.kind if result.error else None
        row.error_message = result.error.message[:500] if result.error else None
        row.cases_passed = sum(c.passed for c in result.cases)
        row.cases = len(result.cases)
        row.findings = sorted({f.rule for f in result.integrity.findings})
        row.tolerance_profile = result.tolerance_profile
        row.module_mode = result.module_mode
        row.profile_disagreement = result.profile_disagreement
        row.limits = list(result.limits)
        row.notes = list(dict.fromkeys(note for case in result.cases for note in case.notes))
        if result.unlaunched:
            row.notes.append(judging.unlaunched_line(result.unlaunched))
        if result.smaller_cases:
            row.notes.append(result.smaller_cases)
        row.emulation = result.emulation.note if result.emulation is not None else None
        row.low_signal = result.low_signal.reason if result.low_signal is not None else None

    def _repair(self, job: TriageJob, row: TriageRow, out: Path, name: str, files: tuple[Path, Path]) -> None:
        task, candidate = files
        work = out / "work" / name
        work.mkdir(parents=True, exist_ok=True)
        config = DebugConfig(limits=job.limits, options=job.options, probes=job.probes)
        model = load_model(job.model)
        store = self._store(job.store) if job.store else None
        loop = DebugLoop(
            model,
            self.evaluator,
            knowledge=self.knowledge,
            config=config,
            transcript=work / "transcript.jsonl",
            store=store,
        )
        started = time.monotonic()
        report: DebugReport
        if store is not None:
            with store.atomic(key=job.store_key or None) as written:
                report = loop.run(task, candidate, work / "out.py")
            row.store = "duplicate" if written.duplicate else "recorded"
        else:
            report = loop.run(task, candidate, work / "out.py")
        row.repair_s = round(time.monotonic() - started, 3)
        row.repair, row.stop_reason, row.iterations = report.status, report.stop_reason, report.iterations
        row.tokens_prompt, row.tokens_completion = report.tokens.prompt, report.tokens.completion
        row.after = classify(report.final.status)
        produced = Path(report.output) if report.output else None
        if produced is None or not produced.is_file():
            return
        before, after = candidate.read_text(), produced.read_text()
        row.diff = "".join(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=f"a/{job.item.id}",
                tofile=f"b/{job.item.id}",
            )
        )
        if report.status == "repaired":
            target = out / "repaired" / f"{name}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(produced.read_bytes())
            row.repaired = str(target.relative_to(out))


def _materialise(root: Path, job: TriageJob) -> tuple[Path, Path]:
    """The job's task and candidate written under `root`, each at the path its name gives (so that what a
    name says, a KernelBench `levelN/NN_name.py` task path for one, still says it)."""
    task = root / "task" / _relative(job.item.task)
    candidate = root / "candidate" / _relative(job.item.candidate)
    for path, name, text in ((task, job.item.task, job.task_text), (candidate, job.item.candidate, job.candidate_text)):
        if text is None:
            raise FileNotFoundError(f"the head could not read {name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, errors="surrogateescape")
    return task, candidate


def _relative(name: str) -> Path:
    """A file's name as a relative path that stays where it is put (no root, no `..`)."""
    parts = [part for part in Path(name).parts if part not in ("..", ".") and part != Path(name).anchor]
    return Path(*parts) if parts else Path("file.py")


def _files_under(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}
