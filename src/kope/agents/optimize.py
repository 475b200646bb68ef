"""The optimize loop: from a correct kernel, a best-first search for faster versions that stay correct.

    evaluate the start: every case, the integrity gates, timing ──► correct? ──► open = {start}
    repeat within the budgets:
        node = the fastest open version
        decision = proposer(node)   an LLM's SEARCH/REPLACE edit, or (offline) the next launch configuration
        new version ──► every case + gates + timing ──► recorded ──► correct: opened (alternatives kept)

The offline proposer searches the kernel's launch parameters (block sizes and other constexpr
launch arguments, num_warps, num_stages: `kope.agents.launch`), seeded with the best configurations
the experience store holds for other tasks on the same device (same operator family first) and
ordering its moves by the speedups those moves gave before. An LLM proposer sees the kernel, its
measurements, the attempts already made from it and, within the same exact token budget, the
experience the packer selects.

Time is the sum over the task's cases of the candidate's median time. On the CPU that is the Triton
interpreter's wall time (`interpreter-wall`): it is reported as such and no speedup over the PyTorch
reference is claimed from it; on CUDA it is measured with events (`cuda-events`) and the speedup over
the reference is reported too. A version counts as faster only when it beats the start by
`min_gain` (timing noise); `confirm` re-measures the start and the best version alternately.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kope.agents.prompts import merged, render, shown_task
from kope.agents.proposers import Frontier, LaunchSearch, ModelProposer, Proposal, Proposer
from kope.cases.task import Case, Task, load_task
from kope.context.budget import Section, pack
from kope.evaluate import EvalOptions, Evaluator
from kope.loop import Guards, LoopLimits, StopReason, Transcript
from kope.models.base import Message, Model, Usage
from kope.models.tokens import count_messages
from kope.protocol.results import EvalResult

if TYPE_CHECKING:
    from kope.memory.recording import RunRecorder
    from kope.memory.store import ExperienceStore

OptimizeStatus = Literal["improved", "not-improved", "incorrect-start"]
INTERPRETER_NOTE = (
    "interpreter-wall: the Triton interpreter's wall time on the CPU. It ranks versions on this machine "
    "but is not GPU speed; no speedup over the PyTorch reference is claimed from it."
)


@dataclass
class OptimizeConfig:
    iterations: int = 8
    """Decisions at most (model calls, or launch configurations tried)."""
    max_tokens: int = 200_000
    max_seconds: float = 3600.0
    prompt_budget: int = 12_000
    reply_tokens: int = 4096
    options: EvalOptions = field(default_factory=lambda: EvalOptions(timing=True))
    memory: bool = True
    """Use the store's experience (prompt sections, seeds and move order); recording needs only a store."""
    min_gain: float = 0.03
    """A version is faster than another only when it takes at least this fraction less time."""
    max_children: int = 4
    """LLM proposals from one version before the search moves on to the next best."""
    confirm: int = 0
    """Re-measure the start and the best version this many times each, alternately, at the end."""


class Node(BaseModel):
    index: int
    parent: int | None = None
    kind: str
    """start, launch-config, edit, or (no version) no-edit, edit-failed, duplicate, model-error"""
    decision: str = ""
    params: dict[str, Any] | None = None
    status: str = ""
    time_ms: float | None = None
    speedup_vs_start: float | None = None
    speedup_vs_parent: float | None = None
    evaluation: int | None = None
    """1-based index of the evaluation that measured it (None: no new version was evaluated)."""
    version_id: int | None = None
    tokens: Usage = Field(default_factory=Usage)


class OptimizeReport(BaseModel):
    """What `kope optimize --json` prints."""

    status: OptimizeStatus
    task: str
    kernel: str
    model: str
    output: str | None
    device: str
    timing_method: str | None
    timing_note: str = ""
    start_ms: float | None = None
    best_ms: float | None = None
    reference_ms: float | None = None
    speedup_vs_start: float | None = None
    speedup_vs_reference: float | None = None
    """Only from comparable timing (cuda-events); None on the CPU interpreter."""
    confirmed_speedup_vs_start: float | None = None
    evaluations: int = 0
    best_found_at: int | None = None
    """The evaluation (1 = the start) that measured the returned version."""
    iterations: int = 0
    tokens: Usage = Field(default_factory=Usage)
    stop_reason: StopReason | None = None
    seconds: float = 0.0
    best_config: dict[str, int] | None = None
    run_id: int | None = None
    trajectory: list[Node] = Field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """`kope optimize`'s exit status: 0 a correct result, faster or not; 1 the starting kernel is wrong on
        some case or rejected by the gates; 2 it does not run or could not be timed (as `kope eval`: 2 error)."""
        if self.status != "incorrect-start":
            return 0
        start = self.trajectory[0].status if self.trajectory else "error"
        return 1 if start in ("fail", "reject") else 2


@dataclass
class _Open:
    node: Node
    source: str
    config: dict[str, int] | None = None
    children: int = 0
    attempts: list[str] = field(default_factory=list)
    exhausted: bool = False


@dataclass
class Search:
    """What a proposer may look at: the nodes so far, the start, the best."""

    task: Task
    start: _Open
    nodes: list[Node] = field(default_factory=list)
    open: list[_Open] = field(default_factory=list)
    best: _Open | None = None
    seen: set[str] = field(default_factory=set)
    tokens: Usage = field(default_factory=Usage)
    evaluations: int = 0
    method: str | None = None
    shown: Case | None = None
    """The case the model is shown (the task's visible one): prompts carry the task at its sizes."""


OptimizeProgress = Callable[[Node], None]


# -- the launch search's memory -------------------------------------------------------------


def launch_memory(
    store: ExperienceStore, *, device: str, family: str, task_id: int | None
) -> tuple[list[dict[str, int]], dict[tuple[str, str], float]]:
    """Seeds (best configurations of other tasks on the device, same family first) and the mean log
    speedup of each knob move measured there (moves on the same family count twice)."""
    configs = store.best_configs(device, exclude_task=task_id, limit=40)
    configs.sort(key=lambda c: (c["family"] != family, -c["speedup"]))
    seeds: list[dict[str, int]] = []
    for found in configs:
        if found["config"] not in seeds:
            seeds.append({str(k): int(v) for k, v in found["config"].items()})
    gains: dict[tuple[str, str], list[float]] = {}
    for row in store.experience(kinds=["launch-config"], limit=2000):
        changes = (row.params or {}).get("changes") or {}
        speedup = row.speedup
        if row.device != device or speedup is None or len(changes) != 1:
            continue
        ((knob, (old, new)),) = changes.items()
        weight = 2.0 if row.family == family else 1.0
        gains.setdefault((knob, "up" if new > old else "down"), []).extend([math.log(speedup)] * int(weight))
    return seeds[:3], {key: statistics.fmean(values) for key, values in gains.items()}


# -- the LLM proposer ----------------------------------------------------------------------------


class OptimizePrompt:
    """The optimize prompt: the kernel, its measurements, the attempts from it and (within the same exact
    token budget) the experience the packer selects."""

    def __init__(self, config: OptimizeConfig, transcript: Transcript, recorder: RunRecorder | None) -> None:
        self.config = config
        self.transcript = transcript
        self.recorder = recorder

    def messages(self, current: _Open, search: Search) -> list[Message]:
        """The messages for a model asked from `current` (the packing recorded and written to the transcript)."""
        messages, packed = self.prompt(current, search)
        if self.recorder is not None:
            self.recorder.packed(packed)
        self.transcript.write(
            "prompt",
            node=current.node.index,
            tokens=packed.tokens,
            budget=packed.budget,
            dropped=packed.dropped,
            reduced=packed.reduced,
            messages=[m.model_dump() for m in messages],
        )
        return messages

    def prompt(self, current: _Open, search: Search) -> tuple[list[Message], Any]:
        system = Message(role="system", content=render("optimize_system.j2"))
        sections = [
            Section(
                "reference",
                "The PyTorch reference (the task)",
                (f"```python\n{shown_task(search.task, search.shown).rstrip()}\n```",),
                priority=100,
                required=True,
            ),
            Section(
                "kernel",
                "The current kernel (correct on every case)",
                (f"```python\n{current.source.rstrip()}\n```",),
                priority=100,
                required=True,
            ),
            Section("measurements", "Measurements", (_measurements(current, search),), priority=95, required=True),
        ]
        if current.attempts:
            sections.append(
                Section(
                    "attempts",
                    "Attempts already made from this kernel",
                    ("\n".join(current.attempts[-6:]), "\n".join(current.attempts[-2:]), ""),
                    priority=40,
                )
            )
        if self.recorder is not None and self.config.memory:
            query = self.recorder.query("optimize", current.source, text=_identifiers(current.source))
            sections += self.recorder.prepare(query)

        def messages_for(included: Sequence[tuple[Section, str]]) -> list[Message]:
            body = render("optimize.j2", sections=merged(included))
            return [system, Message(role="user", content=body.strip() + "\n")]

        packed = pack(
            sections,
            self.config.prompt_budget,
            lambda included: count_messages(messages_for(included)),
            breadth_first=True,
        )
        return messages_for(packed.sections), packed


def _identifiers(source: str) -> str:
    import re

    return " ".join(sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", source)))[:400])


def _measurements(current: _Open, search: Search) -> str:
    method = search.method or "unknown"
    lines = [f"Timing: {method}" + (f" ({INTERPRETER_NOTE})" if method == "interpreter-wall" else "")]
    start_ms = search.start.node.time_ms
    lines.append(f"- the starting kernel: {_ms(start_ms)}")
    speedup = current.node.speedup_vs_start
    lines.append(
        f"- this kernel: {_ms(current.node.time_ms)}" + (f", {speedup:.2f}x the start's speed" if speedup else "")
    )
    if search.best is not None and search.best is not current:
        lines.append(f"- the fastest correct version so far: {_ms(search.best.node.time_ms)}")
    lines.append("Time is the sum over the task's cases of the median time of one forward call.")
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.4g} ms"


# -- the loop ----------------------------------------------------------------------------------


class OptimizeLoop:
    def __init__(
        self,
        model: Model | None,
        evaluator: Evaluator,
        *,
        config: OptimizeConfig | None = None,
        store: ExperienceStore | None = None,
        transcript: Path | None = None,
        progress: OptimizeProgress | None = None,
    ) -> None:
        """`model` None: the offline launch search (`--model offline`)."""
        self.model = model
        self.name = model.name if model is not None else "offline"
        self.evaluator = evaluator
        self.config = config or OptimizeConfig()
        self.store = store
        self.transcript = Transcript(transcript)
        self.progress = progress or (lambda node: None)

    def run(
        self, task: Task | str | Path, kernel: str | Path, out: Path, *, cases: Sequence[Case] | None = None
    ) -> OptimizeReport:
        """Optimize `kernel`; `cases`: evaluate on these instead of the task's (every version, every case)."""
        began = time.monotonic()
        task = task if isinstance(task, Task) else load_task(task)
        options = dataclasses.replace(self.config.options, timing=True)
        cases = list(cases) if cases is not None else self.evaluator.cases(task, options=options)
        source = Path(kernel).read_text()
        work = out.with_name(f".{out.name}.work.py")
        recorder = self._recorder(task)
        interpreted = not options.device.startswith("cuda")
        self.transcript.write("start", task=str(task.path), kernel=str(kernel), model=self.name)

        result = self._evaluate(task, work, source, options, cases)
        start_node = Node(
            index=0,
            kind="start",
            status=result.status,
            time_ms=_time(result),
            evaluation=1,
            speedup_vs_start=1.0 if _time(result) else None,
        )
        start = _Open(node=start_node, source=source)
        search = Search(
            task=task,
            start=start,
            nodes=[start_node],
            evaluations=1,
            method=_method(result),
            shown=next((c for c in cases if c.visible), None),
        )
        search.seen.add(_norm(source))
        if recorder is not None:
            start_node.version_id = recorder.record(source, result=result, scope="all").version.id
            recorder.store.update_run(recorder.run.id, start_version=start_node.version_id)
        self.progress(start_node)
        report = OptimizeReport(
            status="incorrect-start",
            task=str(task.path),
            kernel=str(kernel),
            model=self.name,
            output=None,
            device=options.device,
            timing_method=search.method,
            timing_note=INTERPRETER_NOTE if search.method == "interpreter-wall" else "",
            start_ms=start_node.time_ms,
            run_id=recorder.run.id if recorder is not None else None,
        )
        if result.status != "pass" or start_node.time_ms is None:
            report.stop_reason = "incorrect-start" if result.status != "pass" else "untimed-start"
            report.evaluations, report.trajectory = 1, search.nodes
            report.seconds = round(time.monotonic() - began, 3)
            if recorder is not None:
                recorder.finish(status=report.status, stop_reason=report.stop_reason, best=source)
            return report
        start.config = None
        search.open.append(start)
        search.best = start
        proposer = self._proposer(source, recorder, interpreted)
        if isinstance(proposer, LaunchSearch):
            start.config = dict(proposer.start)
        stop_reason = self._search(search, proposer, recorder, task, work, options, cases, began)
        work.unlink(missing_ok=True)
        best = search.best
        assert best is not None and best.node.time_ms is not None and start_node.time_ms is not None
        improved = best is not start and best.node.time_ms <= start_node.time_ms * (1 - self.config.min_gain)
        chosen = best if improved else start
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(chosen.source)
        reference_ms = _reference_time(result)
        report.status = "improved" if improved else "not-improved"
        report.output = str(out)
        report.best_ms = chosen.node.time_ms
        report.reference_ms = reference_ms
        report.speedup_vs_start = (start_node.time_ms / chosen.node.time_ms) if chosen.node.time_ms else None
        if search.method == "cuda-events" and reference_ms and chosen.node.time_ms:
            report.speedup_vs_reference = reference_ms / chosen.node.time_ms
        report.evaluations = search.evaluations
        report.best_found_at = chosen.node.evaluation
        report.iterations = len(search.nodes) - 1
        report.tokens = search.tokens
        report.stop_reason = stop_reason
        report.best_config = chosen.config
        if self.config.confirm and improved:
            report.confirmed_speedup_vs_start = self._confirm(task, work, start, chosen, options, cases, recorder)
            report.evaluations = search.evaluations + 2 * self.config.confirm
            work.unlink(missing_ok=True)
        report.trajectory = search.nodes
        report.seconds = round(time.monotonic() - began, 3)
        if recorder is not None:
            recorder.finish(
                status=report.status,
                stop_reason=stop_reason,
                tokens=(search.tokens.prompt, search.tokens.completion),
                best=chosen.source,
                summary={
                    "config": chosen.config,
                    "speedup_vs_start": report.speedup_vs_start,
                    "confirmed_speedup_vs_start": report.confirmed_speedup_vs_start,
                    "method": search.method,
                    "start_ms": start_node.time_ms,
                    "best_ms": chosen.node.time_ms,
                    "evaluations": report.evaluations,
                    "best_found_at": report.best_found_at,
                },
            )
        self.transcript.write("end", report=report.model_dump(mode="json", exclude={"trajectory"}))
        return report

    def _search(
        self,
        search: Search,
        proposer: Proposer,
        recorder: RunRecorder | None,
        task: Task,
        work: Path,
        options: EvalOptions,
        cases: list[Case],
        began: float,
    ) -> StopReason:
        limits = self.config
        guards = Guards(
            LoopLimits(max_iterations=limits.iterations, max_tokens=limits.max_tokens, max_seconds=limits.max_seconds),
            started=began,
        )
        while True:
            stop = guards.before_call(len(search.nodes) - 1, search.tokens.total)
            if stop is not None:
                return stop
            candidates = [o for o in search.open if not o.exhausted]
            if not candidates:
                return "search-exhausted"
            current = min(candidates, key=lambda o: (o.node.time_ms or math.inf, o.node.index))
            proposal = proposer.propose(Frontier(current, search, prompt=self._prompt(recorder, current, search)))
            if proposal is None:
                current.exhausted = True
                continue
            current.children += 1
            node = Node(
                index=len(search.nodes),
                parent=current.node.index,
                kind=proposal.kind,
                decision=proposal.text or proposal.note,
                params=proposal.params,
                tokens=proposal.usage,
            )
            search.nodes.append(node)
            search.tokens = search.tokens + proposal.usage
            if proposal.source is None:
                node.status = proposal.kind
                current.attempts.append(f"attempt {node.index}: {proposal.kind}: {proposal.note}")
                if proposal.kind == "model-error":
                    self.progress(node)
                    return "model-error"
                self.progress(node)
                continue
            if _norm(proposal.source) in search.seen:
                node.kind, node.status = "duplicate", "duplicate"
                current.attempts.append(f"attempt {node.index}: gave back a version already evaluated")
                self.progress(node)
                continue
            search.seen.add(_norm(proposal.source))
            result = self._evaluate(task, work, proposal.source, options, cases)
            search.evaluations += 1
            node.evaluation = search.evaluations
            node.status = result.status
            node.time_ms = _time(result)
            if node.time_ms and search.start.node.time_ms:
                node.speedup_vs_start = search.start.node.time_ms / node.time_ms
            if node.time_ms and current.node.time_ms:
                node.speedup_vs_parent = current.node.time_ms / node.time_ms
            if recorder is not None:
                from kope.memory.learned import unified_diff
                from kope.memory.recording import failure_text
                from kope.memory.records import DecisionIn

                made = DecisionIn(
                    kind=proposal.kind,
                    text=proposal.text,
                    diff=unified_diff(current.source, proposal.source),
                    params=proposal.params,
                    tokens_prompt=proposal.usage.prompt,
                    tokens_completion=proposal.usage.completion,
                )
                node.version_id = recorder.record(
                    proposal.source,
                    parent=current.source,
                    made=made,
                    result=result,
                    scope="all",
                    signature_text=failure_text(result),
                ).version.id
            self.transcript.write(
                "evaluation", node=node.index, status=result.status, time_ms=node.time_ms, params=proposal.params
            )
            outcome = _outcome(node)
            current.attempts.append(f"attempt {node.index}: {proposal.text[:200]} → {outcome}")
            if result.status == "pass" and node.time_ms is not None:
                opened = _Open(node=node, source=proposal.source, config=(proposal.params or {}).get("config"))
                search.open.append(opened)
                assert search.best is not None and search.best.node.time_ms is not None
                if node.time_ms < search.best.node.time_ms:
                    search.best = opened
            self.progress(node)

    def _evaluate(self, task: Task, work: Path, source: str, options: EvalOptions, cases: list[Case]) -> EvalResult:
        work.write_text(source)
        return self.evaluator.evaluate(task, work, options=options, cases=cases)

    def _confirm(
        self,
        task: Task,
        work: Path,
        start: _Open,
        best: _Open,
        options: EvalOptions,
        cases: list[Case],
        recorder: RunRecorder | None,
    ) -> float | None:
        times: dict[str, list[float]] = {"start": [], "best": []}
        for _ in range(self.config.confirm):
            for label, entry in (("start", start), ("best", best)):
                result = self._evaluate(task, work, entry.source, options, cases)
                if recorder is not None:
                    recorder.evaluation(entry.source, result, scope="confirm")
                measured = _time(result)
                if result.status == "pass" and measured:
                    times[label].append(measured)
        if not times["start"] or not times["best"]:
            return None
        return statistics.median(times["start"]) / statistics.median(times["best"])

    def _recorder(self, task: Task) -> RunRecorder | None:
        if self.store is None:
            return None
        from kope.memory.recording import RunRecorder

        return RunRecorder(
            self.store,
            kind="optimize",
            task=task,
            model=self.name,
            device=self.config.options.device,
            experience=self.config.memory,
        )

    def _prompt(self, recorder: RunRecorder | None, current: _Open, search: Search) -> Callable[[], list[Message]]:
        return lambda: OptimizePrompt(self.config, self.transcript, recorder).messages(current, search)

    def _proposer(self, source: str, recorder: RunRecorder | None, interpreted: bool) -> Proposer[Frontier]:
        if self.model is None:
            seeds: list[dict[str, int]] = []
            order: dict[tuple[str, str], float] = {}
            if recorder is not None and self.config.memory:
                seeds, order = launch_memory(
                    recorder.store, device=recorder.device, family=recorder.task.family, task_id=recorder.task.id
                )
            return LaunchSearch(source, interpreted=interpreted, seeds=seeds, move_order=order)
        return ChildLimited(self.model, self.config, self.transcript)


class ChildLimited:
    """The optimize loop's model proposer: at most `max_children` proposals from one version, each reply
    written to the transcript, each edit described by the reply's explanation."""

    def __init__(self, model: Model, config: OptimizeConfig, transcript: Transcript) -> None:
        self.name = model.name
        self.inner = ModelProposer(model, max_tokens=config.reply_tokens, instrumentation=False)
        self.max_children = config.max_children
        self.transcript = transcript

    def propose(self, view: Frontier) -> Proposal | None:
        if view.current.children >= self.max_children:
            return None
        proposal = self.inner.propose(view)
        if proposal.kind == "model-error":
            return proposal
        self.transcript.write(
            "reply", node=view.current.node.index, text=proposal.text, usage=proposal.usage.model_dump()
        )
        from kope.memory.recording import explanation_of

        proposal.text = explanation_of(proposal.text) if proposal.kind == "edit" else ""
        return proposal


def _norm(source: str) -> str:
    from kope.memory.fingerprints import normalized_hash

    return normalized_hash(source)


def _time(result: EvalResult) -> float | None:
    if result.status != "pass" and result.error is not None:
        return None
    timings = [c.timing for c in result.cases]
    if not timings or any(t is None for t in timings):
        return None
    return sum(t.candidate_ms for t in timings if t is not None)


def _reference_time(result: EvalResult) -> float | None:
    references = [c.timing.reference_ms if c.timing is not None else None for c in result.cases]
    if not references or any(r is None for r in references):
        return None
    return sum(r for r in references if r is not None)


def _method(result: EvalResult) -> str | None:
    return next((c.timing.method for c in result.cases if c.timing is not None), None)


def _outcome(node: Node) -> str:
    if node.status != "pass":
        return f"{node.status} (discarded)"
    if node.speedup_vs_parent is None:
        return "correct, not timed"
    return f"correct, {node.time_ms:.4g} ms, {node.speedup_vs_parent:.2f}x its parent's speed"


def optimize(
    task: Task | str | Path,
    kernel: str | Path,
    model: Model,
    *,
    out: Path,
    evaluator: Evaluator,
    config: OptimizeConfig | None = None,
    store: ExperienceStore | None = None,
    transcript: Path | None = None,
    progress: OptimizeProgress | None = None,
) -> OptimizeReport:
    """Make `kernel` faster with `model`; write the fastest correct version to `out` and return the report."""
    loop = OptimizeLoop(model, evaluator, config=config, store=store, transcript=transcript, progress=progress)
    return loop.run(task, kernel, out)
