"""Context ablation: prompt tokens per optimize step with the experience packer, against 'include everything'.

A scripted model optimizes the operator suite in order. Its decisions are scripted launch-parameter
changes of each real kernel (real diffs, written by `kope.agents.launch`), with a short explanation;
their outcomes are drawn from a seeded random generator (this benchmark measures prompts, not speed,
so no kernel is run). Every decision is recorded in an experience store as `kope optimize` records
it, so each prompt sees the history of the operators before it and of its own run.

At every step the optimize prompt is built as `kope optimize` builds it (reference, kernel,
measurements, attempts, experience), and measured four ways:

- naive: every candidate experience item at full detail (diff included), no budget;
- packer, equal information: every candidate item kept (no per-section caps), at the smallest
  experience budget that keeps them all — the packer renders them shorter, never leaves one out;
- packer at the default prompt budget (12,000 tokens) with its default caps;
- packer at a tight prompt budget (3,000 tokens).

Reported: prompt tokens per step (mean, max), experience tokens, items kept of the candidates, and
'useful kept': the share of candidate items of the same operator family that made a kernel faster.

Usage: .venv/bin/python benchmarks/context_ablation.py [--steps 6] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.agents.launch import apply_config, describe
from kope.agents.optimize import Node, OptimizeConfig, OptimizePrompt, Search, _Open
from kope.agents.prompts import merged, render
from kope.agents.proposers import LaunchSearch
from kope.cases.task import load_task
from kope.context.budget import Section
from kope.loop import Transcript
from kope.memory import DecisionIn, ExperienceStore
from kope.memory.learned import unified_diff
from kope.memory.packer import Caps, ExperiencePacker, Item, naive_block, render_block
from kope.memory.recording import RunRecorder
from kope.models.base import Message
from kope.models.tokens import count, count_messages
from kope.ops import list_ops
from kope.protocol.results import CaseResult, EvalResult, Timing

EXPLANATIONS = (
    "Fewer, larger programs: each program moves more contiguous elements, so launch and loop overhead shrink.",
    "Smaller blocks give more programs to spread over the streaming multiprocessors and lower register pressure.",
    "More warps per program hide memory latency for this memory-bound kernel.",
    "Fewer warps: the block is small, so extra warps only add synchronisation.",
    "A deeper software pipeline (num_stages) overlaps the loads of the next tile with the math of this one.",
)


def timed(ms: float, status: str = "pass") -> EvalResult:
    case = CaseResult(
        name="c",
        overrides={},
        visible=True,
        passed=status == "pass",
        timing=Timing(method="interpreter-wall", candidate_ms=ms),
    )
    return EvalResult(
        status=status,
        cases=[case],
        cases_run="all",
        task="t",
        candidate="c",  # type: ignore[arg-type]
        device="cpu",
        seed=0,
    )


def naive_prompt(proposer: OptimizePrompt, base: Sequence[tuple[Section, str]], items: list[Item]) -> int:
    system = Message(role="system", content=render("optimize_system.j2"))
    body = render("optimize.j2", sections=merged(list(base))).strip()
    block = naive_block(items)
    user = Message(role="user", content=(body + "\n\n" + block).strip() + "\n")
    return count_messages([system, user])


def smallest_budget_keeping_all(packer: ExperiencePacker, recorder: RunRecorder, current: _Open) -> tuple[int, int]:
    """(experience tokens, items) at the smallest budget where the uncapped packer keeps every candidate."""
    query = recorder.query("optimize", current.source)
    prepared = packer.prepare(query)
    wanted = len(prepared.sections)
    if not wanted:
        return 0, 0
    low, high = 0, count(render_block([(s, s.levels[0]) for s in prepared.sections])) + 10
    while low < high:
        middle = (low + high) // 2
        packed, _ = packer.pack_alone(query, middle)
        if len(packed.sections) == wanted:
            high = middle
        else:
            low = middle + 1
    packed, _ = packer.pack_alone(query, low)
    return packed.tokens, len(packed.sections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ops", default="", help="comma-separated operator names (default: the whole suite)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    names = {n for n in args.ops.split(",") if n}
    ops = [op for op in list_ops() if not names or op.name in names]
    console = Console(width=150)
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}, {len(ops)} operators x {args.steps} steps, seed {args.seed}"
    )
    scratch = Path(tempfile.mkdtemp(prefix="kope-context-"))
    rows: dict[str, list[float]] = {
        key: []
        for key in (
            "naive",
            "naive_exp",
            "equal",
            "equal_items",
            "default",
            "default_exp",
            "default_items",
            "tight",
            "tight_items",
            "candidates",
            "useful",
            "useful_default",
            "useful_tight",
            "pack_ms",
        )
    }
    began = time.monotonic()
    with ExperienceStore.open(scratch / "memory.db") as store:
        for op in ops:
            task = load_task(op.task_path)
            source = op.kernel_path.read_text()
            recorder = RunRecorder(store, kind="optimize", task=task, model="scripted", device="cpu")
            uncapped = ExperiencePacker(store, caps=Caps(999, 999, 999, 999))
            search_knobs = LaunchSearch(source, interpreted=False)
            start_ms = 100.0
            recorder.record(source, result=timed(start_ms), scope="all")
            start = _Open(
                node=Node(index=0, kind="start", time_ms=start_ms, speedup_vs_start=1.0),
                source=source,
                config=dict(search_knobs.start),
            )
            search = Search(task=task, start=start, nodes=[start.node], best=start, method="interpreter-wall")
            current = start
            for step in range(1, args.steps + 1):
                for budget, key in ((12_000, "default"), (3_000, "tight")):
                    config = OptimizeConfig(prompt_budget=budget)
                    proposer = OptimizePrompt(config, Transcript(None), recorder)
                    clock = time.perf_counter()
                    _, packed = proposer.prompt(current, search)
                    if key == "default":
                        rows["pack_ms"].append(1000 * (time.perf_counter() - clock))
                    experience = [(s, t) for s, t in packed.sections if s.name.startswith("exp:")]
                    rows[key].append(packed.tokens)
                    rows[f"{key}_items"].append(len(experience))
                    if key == "default":
                        rows["default_exp"].append(count(render_block(experience)) if experience else 0)
                        base = [(s, t) for s, t in packed.sections if not s.name.startswith("exp:")]
                    kept = {s.name.removeprefix("exp:") for s, _ in experience}
                    query = recorder.query("optimize", current.source)
                    candidates = uncapped.items(query)
                    useful = [i.key for i in candidates if i.family == task_family(recorder) and i.outcome == "faster"]
                    if useful:
                        rows[f"useful_{key}"].append(sum(1 for k in useful if k in kept) / len(useful))
                    recorder._close_prompt("measured")
                candidates = uncapped.items(recorder.query("optimize", current.source))
                rows["candidates"].append(len(candidates))
                rows["naive"].append(naive_prompt(proposer, base, candidates))
                rows["naive_exp"].append(count(naive_block(candidates)) if candidates else 0)
                equal_tokens, equal_items = smallest_budget_keeping_all(uncapped, recorder, current)
                rows["equal"].append(rows["default"][-1] - rows["default_exp"][-1] + equal_tokens)
                rows["equal_items"].append(equal_items)
                moves = search_knobs.moves(current.config or search_knobs.start)
                config_next = moves[rng.randrange(len(moves))] if moves else dict(search_knobs.start)
                changes = {k: (current.config or {}).get(k, v) for k, v in config_next.items()}
                changes = {k: (old, config_next[k]) for k, old in changes.items() if old != config_next[k]}
                new_source = apply_config(current.source, config_next)
                status = "pass" if rng.random() > 0.2 else "fail"
                ms = (current.node.time_ms or start_ms) * rng.uniform(0.7, 1.25)
                text = f"launch parameters {describe(changes)}. {rng.choice(EXPLANATIONS)}"
                made = DecisionIn(
                    kind="launch-config",
                    text=text,
                    diff=unified_diff(current.source, new_source),
                    params={"config": config_next, "changes": {k: list(v) for k, v in changes.items()}},
                )
                recorder.record(new_source, parent=current.source, made=made, result=timed(ms, status), scope="all")
                node = Node(
                    index=step,
                    parent=current.node.index,
                    kind="launch-config",
                    decision=text,
                    status=status,
                    time_ms=ms,
                    speedup_vs_start=start_ms / ms,
                )
                search.nodes.append(node)
                current.attempts.append(f"attempt {step}: {text[:120]} → {status}, {ms:.3g} ms")
                if status == "pass" and ms < (current.node.time_ms or start_ms):
                    current = _Open(node=node, source=new_source, config=config_next)
                    search.best = current
            best = search.best.node.time_ms if search.best else start_ms
            recorder.finish(
                status="improved",
                stop_reason="scripted",
                best=current.source,
                summary={"config": current.config, "speedup_vs_start": start_ms / (best or start_ms)},
            )
    table = Table(
        title="Prompt tokens per optimize step (experience from earlier steps and operators)", title_justify="left"
    )
    for column in (
        "context",
        "prompt tokens: mean",
        "max",
        "experience tokens: mean",
        "items kept / candidates",
        "useful items kept",
    ):
        table.add_column(column)
    mean = statistics.fmean
    candidates = mean(rows["candidates"])
    table.add_row(
        "naive: everything, full detail",
        f"{mean(rows['naive']):,.0f}",
        f"{max(rows['naive']):,.0f}",
        f"{mean(rows['naive_exp']):,.0f}",
        f"{candidates:.1f} / {candidates:.1f}",
        "100%",
    )
    table.add_row(
        "packer, equal information (all items kept)",
        f"{mean(rows['equal']):,.0f}",
        f"{max(rows['equal']):,.0f}",
        f"{mean(rows['equal']) - mean(rows['default']) + mean(rows['default_exp']):,.0f}",
        f"{mean(rows['equal_items']):.1f} / {candidates:.1f}",
        "100%",
    )
    table.add_row(
        "packer, 12,000-token prompt budget",
        f"{mean(rows['default']):,.0f}",
        f"{max(rows['default']):,.0f}",
        f"{mean(rows['default_exp']):,.0f}",
        f"{mean(rows['default_items']):.1f} / {candidates:.1f}",
        f"{100 * mean(rows['useful_default'] or [1.0]):.0f}%",
    )
    table.add_row(
        "packer, 3,000-token prompt budget",
        f"{mean(rows['tight']):,.0f}",
        f"{max(rows['tight']):,.0f}",
        "",
        f"{mean(rows['tight_items']):.1f} / {candidates:.1f}",
        f"{100 * mean(rows['useful_tight'] or [1.0]):.0f}%",
    )
    console.print(table)
    console.print(
        f"steps measured: {len(rows['naive'])}; packer time per prompt (candidates, scoring, exact packing): "
        f"median {statistics.median(rows['pack_ms']):.1f} ms; wall {time.monotonic() - began:.0f} s"
    )


def task_family(recorder: RunRecorder) -> str:
    return recorder.task.family


if __name__ == "__main__":
    main()
