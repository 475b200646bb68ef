"""Triage a run directory: match, evaluate, classify, repair the near misses, write rows and a report.

    summary = triage(Path("tasks"), Path("candidates"), Path("out"), executor=make_executor("ray"))

`OUT/results.jsonl` gets one row per candidate as it finishes (a rerun skips the candidates that
have a row, so an interrupted run resumes); `OUT/repaired/` the repaired kernels, `OUT/heatmaps/`
where the wrong ones are wrong, `OUT/report.html` the page (rewritten at the end, also after Ctrl-C).
Budgets are for the whole run: tokens (counted over every row, earlier runs' too) and seconds (this
run's wall time). Each job's debug loop gets what is left when it is sent; once a budget is spent,
near misses are still classified but not repaired (`repair: skipped`, with the reason).
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from kope.evaluate import EvalOptions
from kope.executors import Executor, LocalExecutor
from kope.loop import LoopLimits
from kope.triage.causes import Cause, by_field, causes
from kope.triage.layout import Item, Matching, Unmatched, match, natural_key
from kope.triage.worker import CLASSES, TriageJob, TriageRow, WorkerSpec

RESULTS = "results.jsonl"
REPORT = "report.html"
STATE = "triage.json"

TriageProgress = Callable[[TriageRow, "TriageSummary"], None]


@dataclass
class TriageSummary:
    out: Path
    total: int
    """Candidates matched to a task."""
    resumed: int = 0
    """Rows already in results.jsonl, not run again."""
    ran: int = 0
    seconds: float = 0.0
    executor: str = "local"
    rows: list[TriageRow] = field(default_factory=list)
    """Every row of the run (earlier runs' and this one's), one per candidate."""
    unmatched: list[Unmatched] = field(default_factory=list)
    layout: str = ""
    interrupted: bool = False
    items: dict[str, Item] = field(default_factory=dict)
    """The matched candidates by id (with the manifest's model and source verdict, where it gives them)."""

    @property
    def classes(self) -> tuple[str, ...]:
        """Every class a row can get, in order (kope's classes, then `error`: kope itself failed)."""
        return (*CLASSES, "error")

    def sorted_rows(self) -> list[TriageRow]:
        """The rows by problem then candidate, numbers in names by value (1, 2, 10, not 1, 10, 2)."""
        return sorted(self.rows, key=lambda r: (natural_key(r.problem), natural_key(r.id)))

    def causes(self) -> list[Cause]:
        """Why the candidates that did not pass failed: each cause once, with its count and an example."""
        return causes(self.rows)

    def by_source_verdict(self) -> dict[str, dict[str, int]]:
        """The classes by what each candidate's own pipeline said (a manifest's `source_verdict`); empty
        when no candidate has one."""
        return by_field(self.rows, self.items, "source_verdict")

    def by_model(self) -> dict[str, dict[str, int]]:
        """The classes by the model that wrote each candidate (a manifest's `model`); empty without one."""
        return by_field(self.rows, self.items, "model")

    def counts(self, when: str = "before") -> dict[str, int]:
        found = Counter(getattr(row, when) for row in self.rows)
        return {name: found.get(name, 0) for name in self.classes}

    @property
    def tokens(self) -> int:
        return sum(row.tokens for row in self.rows)

    @property
    def saved(self) -> int:
        """Near misses and broken kernels that the repair turned into passes."""
        return sum(row.before in ("near-miss", "broken") and row.after == "pass" for row in self.rows)

    @property
    def emulated(self) -> int:
        """Rows judged with CUDA emulated on the CPU interpreter."""
        return sum(row.emulation is not None for row in self.rows)

    def pass_rate(self, when: str = "before") -> float:
        return self.counts(when)["pass"] / len(self.rows) if self.rows else 0.0


def read_rows(out: Path) -> list[TriageRow]:
    """The rows of OUT/results.jsonl, one per candidate id (the first one; unreadable lines skipped)."""
    file = out / RESULTS if out.is_dir() else out
    rows: dict[str, TriageRow] = {}
    if not file.is_file():
        return []
    for line in file.read_text().splitlines():
        if not line.strip():
            continue
        try:
            row = TriageRow.model_validate_json(line)
        except ValidationError:
            continue
        rows.setdefault(row.id, row)
    return list(rows.values())


def _run_token(out: Path, tasks: Path, candidates: Path) -> str:
    """This run's identity (kept in OUT/triage.json across resumes): the experience store's keys use it."""
    state = out / STATE
    if state.is_file():
        try:
            return str(json.loads(state.read_text())["run"])
        except (ValueError, KeyError):
            pass
    token = uuid.uuid4().hex
    state.write_text(
        json.dumps(
            {
                "run": token,
                "tasks": str(tasks),
                "candidates": str(candidates),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
            },
            indent=1,
        )
        + "\n"
    )
    return token


def triage(
    tasks: Path,
    candidates: Path,
    out: Path,
    *,
    executor: Executor | None = None,
    model: str = "offline",
    options: EvalOptions | None = None,
    max_tokens: int | None = None,
    max_seconds: float | None = None,
    max_iterations: int = 8,
    store: str | None = None,
    cache_dir: Path | None = None,
    probes: bool = False,
    progress: TriageProgress | None = None,
    matching: Matching | None = None,
    repair: bool = True,
) -> TriageSummary:
    """Triage every candidate not already in OUT/results.jsonl (see the module docstring); `repair=False`
    classifies only (near misses get `repair: skipped`)."""
    began = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    matching = matching or match(tasks, candidates)
    owned = executor is None
    executor = executor or LocalExecutor(1)
    options = options or EvalOptions()
    token = _run_token(out, tasks, candidates)
    previous = {row.id: row for row in read_rows(out)}
    known = {item.id for item in matching.items}
    summary = TriageSummary(
        out=out,
        total=len(matching.items),
        executor=executor.name,
        unmatched=list(matching.unmatched),
        layout=matching.layout,
        items={item.id: item for item in matching.items},
    )
    summary.rows = [row for ident, row in previous.items() if ident in known]
    summary.resumed = len(summary.rows)
    todo = [item for item in matching.items if item.id not in previous]
    (out / "unmatched.json").write_text(json.dumps([u.model_dump() for u in matching.unmatched], indent=1) + "\n")

    def jobs() -> Iterator[TriageJob]:
        for item in todo:
            yield _job(item)

    def _job(item: Item) -> TriageJob:
        tokens_left, seconds_left = LoopLimits().max_tokens, LoopLimits().max_seconds
        reasons = [] if repair else ["repair turned off (--no-repair)"]
        if max_tokens is not None:
            left = max_tokens - summary.tokens
            if left <= 0:
                reasons.append(f"token budget spent ({summary.tokens}/{max_tokens})")
            tokens_left = max(0, min(tokens_left, left))
        if max_seconds is not None:
            left_s = max_seconds - (time.monotonic() - began)
            if left_s <= 0:
                reasons.append(f"time budget spent ({max_seconds:.0f} s)")
            seconds_left = max(0.0, min(seconds_left, left_s))
        limits = LoopLimits(max_iterations=max_iterations, max_tokens=tokens_left, max_seconds=seconds_left)
        return TriageJob(
            item=item,
            task_text=_read(item.task),
            candidate_text=_read(item.candidate),
            options=dataclasses.replace(options, module_mode=item.module_mode) if item.module_mode else options,
            model=model,
            limits=limits,
            repair=not reasons,
            skip_reason="; ".join(reasons),
            store=store,
            store_key=f"triage:{token}:{item.id}",
            probes=probes,
        )

    seen = set(previous)
    spec = WorkerSpec(
        cache_dir=str(cache_dir) if cache_dir else None,
        max_parallel=2 if isinstance(executor, LocalExecutor) and executor.workers <= 1 else 1,
    )
    try:
        with (out / RESULTS).open("a") as handle:
            for row in executor.map(spec, jobs()):
                if row.id in seen:  # a job that ran twice (a retry whose first try also reported): one row
                    continue
                seen.add(row.id)
                row.save_files(out)
                row.files = {}
                handle.write(row.model_dump_json() + "\n")
                handle.flush()
                summary.rows.append(row)
                summary.ran += 1
                summary.seconds = round(time.monotonic() - began, 3)
                if progress is not None:
                    progress(row, summary)
    except KeyboardInterrupt:
        summary.interrupted = True
        raise
    finally:
        if owned:
            executor.close()
        summary.seconds = round(time.monotonic() - began, 3)
        from kope.triage.report import write_report

        write_report(summary, out / REPORT)
    return summary


def _read(path: str) -> str | None:
    """A file's text for a job (bytes that are not UTF-8 survive: the worker writes them back as they were);
    None when it cannot be read, which the worker reports on the candidate's row."""
    try:
        return Path(path).read_text(errors="surrogateescape")
    except OSError:
        return None
