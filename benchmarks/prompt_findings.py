"""Prompt findings: repair-prompt tokens with kope's findings section and without it (issue 30, "With a model").

The findings (kope.diagnose.findings): the value region the wrong elements sit in, the reference's formulas from
the verified table, and the evidence that several programs write one output element. For each near miss the
candidate is diagnosed on the case a model is shown (the real evaluator, Triton's interpreter, no probes), and
the first repair prompt is built as `kope debug` builds it, with the findings and without them.

Three groups of near misses:

- `fixed`: near misses whose fix kope holds: tests/fixtures/findings (each with its fix) and the bundled
  corpora's near misses of kope's own operators (`op:` tasks) whose reference applies an activation or that
  miss an atomic (the fix: the operator's good kernel). These also run end to end: `kope debug`'s loop with a
  scripted model that answers with the fix (the whole file), once with findings and once without; tokens per
  repair are the run's prompt and completion tokens.
- `corpora`: the hand-written corpora's near misses with tasks of their own, labelled wrong-constant,
  missing-atomic or numerical-instability, whose reference applies an activation or that miss an atomic
  (prompt tokens only: kope holds no fix for them).
- `realdiscards`: the real-discard set's `dev` rows whose pipeline verdict is `fail` (prompt tokens only), read
  from --realdiscards (a materialized copy; its tasks and candidates are not committed): the first candidate of
  each problem whose path matches --real-match, at most --real-limit problems.

A scripted model cannot show that findings make a real model repair more often or in fewer steps: it repairs
at its first step whatever the prompt says, so its tokens per repair differ only by the findings' own tokens.
That needs a real endpoint (--model openai:MODEL or anthropic:MODEL replaces the scripted one).

Usage: .venv/bin/python benchmarks/prompt_findings.py [--realdiscards DIR] [--real-limit 8] [--real-match RE]
       [--model SPEC] [--out docs/results/prompt-findings.md]
"""

from __future__ import annotations

import argparse
import csv
import platform
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.agents import DebugConfig, DebugLoop, LoopLimits
from kope.agents.prompts import StepContext, build, shown_task
from kope.bench.corpus import load_suite
from kope.bugs.reference import activations
from kope.cases.task import load_task
from kope.diagnose import Diagnoser
from kope.diagnose.findings import findings
from kope.evaluate import EvalOptions, Evaluator
from kope.models import load_model
from kope.models.base import Model
from kope.models.replay import ScriptedModel
from kope.ops import get_op

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "src" / "kope" / "corpora"
FIXTURES = ROOT / "tests" / "fixtures" / "findings"
OWN = (
    ("swish_task", "swish_sigmoid", "swish_good"),
    ("elu_task", "elu_linear", "elu_good"),
    ("sum_task", "sum_shared_store", "sum_good"),
)
OP_CORPORA = ("fixtures", "heldout", "handwritten")
TASK_CORPORA = tuple(f"handwritten{n}" for n in range(2, 8))
LABELS = ("wrong-constant", "missing-atomic", "numerical-instability")
BUDGET = 12_000
REAL_MATCH = r"Loss|GELU|Sigmoid|Swish|Hardtanh|Softmax|Sum|Clamp|Min"
"""Problems whose reference applies an activation or a reduction (not a bare matrix product or convolution)."""


@dataclass
class NearMiss:
    group: str
    name: str
    task: Path
    candidate: Path
    fix: Path | None = None


def near_misses(realdiscards: Path | None, real_limit: int, real_match: str) -> list[NearMiss]:
    found = [
        NearMiss("fixed", f"findings/{near}", FIXTURES / f"{task}.py", FIXTURES / f"{near}.py", FIXTURES / f"{fix}.py")
        for task, near, fix in OWN
    ]
    for corpus in (*OP_CORPORA, *TASK_CORPORA):
        suite = load_suite(CORPORA / corpus)
        for entry in suite.manifest.entries:
            if entry.task.startswith("op:"):
                if corpus not in OP_CORPORA:
                    continue
                op = get_op(entry.task[3:])
                if activations(op.task_path.read_text()) or entry.label == "missing-atomic":
                    candidate = suite.root / entry.candidate
                    found.append(NearMiss("fixed", f"{corpus}/{entry.id}", op.task_path, candidate, op.kernel_path))
                continue
            if corpus in OP_CORPORA or entry.label not in LABELS:
                continue
            task = suite.root / entry.task
            if activations(task.read_text()) or entry.label == "missing-atomic":
                found.append(NearMiss("corpora", f"{corpus}/{entry.id}", task, suite.root / entry.candidate))
    if realdiscards is not None and (realdiscards / "manifest.csv").exists():
        with (realdiscards / "manifest.csv").open() as handle:
            rows = [r for r in csv.DictReader(handle) if r["split"] == "dev" and r["source_verdict"] == "fail"]
        tasks: set[str] = set()
        for row in rows:
            if len(tasks) >= real_limit or row["task"] in tasks or not re.search(real_match, row["task"]):
                continue
            tasks.add(row["task"])
            task, candidate = realdiscards / "tasks" / row["task"], realdiscards / row["candidate"]
            problem = Path(row["task"]).stem
            name = f"realdiscards/{row['task'].split('/')[0]}/{problem}/{Path(row['candidate']).stem[:16]}"
            found.append(NearMiss("realdiscards", name, task, candidate))
    return found


@dataclass
class Row:
    item: NearMiss
    status: str
    kinds: str = ""
    with_tokens: int = 0
    without_tokens: int = 0
    section_tokens: int = 0
    """What the findings add to the prompt (their heading included)."""
    seconds: float = 0.0
    repair_with: tuple[str, int, int] | None = None
    repair_without: tuple[str, int, int] | None = None
    """(status, iterations, prompt + completion tokens) of the scripted end-to-end run."""


def measure_prompt(evaluator: Evaluator, item: NearMiss, options: EvalOptions) -> Row:
    began = time.monotonic()
    task = load_task(item.task)
    shown = [c for c in evaluator.cases(task, options=options) if c.visible]
    diagnosis = Diagnoser(evaluator).diagnose(task, item.candidate, cases=shown, probes=False, options=options)
    row = Row(item, diagnosis.status)
    if diagnosis.status != "fail":
        row.seconds = time.monotonic() - began
        return row
    reference = shown_task(task, shown[0] if shown else None)
    source = item.candidate.read_text()
    found = findings(diagnosis, reference)
    row.kinds = "".join(k for k, on in (("F", found.formulas), ("R", found.region), ("S", found.shared_stores)) if on)
    packed_with = build(StepContext(reference, source, diagnosis, findings=found), BUDGET)[1]
    packed_without = build(StepContext(reference, source, diagnosis), BUDGET)[1]
    row.with_tokens, row.without_tokens = packed_with.tokens, packed_without.tokens
    row.section_tokens = packed_with.tokens - packed_without.tokens
    row.seconds = time.monotonic() - began
    return row


def repair(evaluator: Evaluator, item: NearMiss, use_findings: bool, model_spec: str) -> tuple[str, int, int]:
    model: Model | None
    if model_spec == "scripted":
        assert item.fix is not None
        fixed = item.fix.read_text().rstrip()
        model = ScriptedModel([f"The kernel is wrong; here is the corrected file.\n```python\n{fixed}\n```\n"])
    else:
        model = load_model(model_spec)
    config = DebugConfig(limits=LoopLimits(max_iterations=4), probes=False, findings=use_findings)
    with tempfile.TemporaryDirectory(prefix="kope-findings-") as scratch:
        report = DebugLoop(model, evaluator, config=config).run(item.task, item.candidate, Path(scratch) / "out.py")
    return report.status, report.iterations, report.tokens.prompt + report.tokens.completion


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--realdiscards", type=Path, default=ROOT / "benchmarks" / "realdiscards", help="a materialized copy"
    )
    parser.add_argument("--real-limit", type=int, default=8, help="real-discard problems (one candidate each)")
    parser.add_argument(
        "--real-match", default=REAL_MATCH, help="a regular expression the real-discard task's path must match"
    )
    parser.add_argument("--model", default="scripted", help="scripted (answers with the known fix) or a model spec")
    parser.add_argument("--no-repair", action="store_true", help="prompt tokens only (no end-to-end runs)")
    parser.add_argument("--groups", default="fixed,corpora,realdiscards", help="which groups to measure")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables (markdown) here")
    args = parser.parse_args()
    console = Console(width=160)
    header = (
        f"machine: {platform.machine()}, {platform.system()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}; prompt budget {BUDGET:,}; model for repairs: {args.model}; "
        f"real-discard problems matching {args.real_match!r}, at most {args.real_limit}"
    )
    console.print(header)
    groups = set(args.groups.split(","))
    items = [i for i in near_misses(args.realdiscards, args.real_limit, args.real_match) if i.group in groups]
    options = EvalOptions(trials=1, timeout_s=120, device="cpu")
    rows: list[Row] = []
    began = time.monotonic()
    with Evaluator() as evaluator:
        for item in items:
            try:
                row = measure_prompt(evaluator, item, options)
            except Exception as exc:  # one broken row (a task that will not load) must not stop the table
                row = Row(item, f"error: {type(exc).__name__}")
            runnable = item.fix is not None or args.model != "scripted"
            if row.status == "fail" and runnable and not args.no_repair:
                row.repair_with = repair(evaluator, item, True, args.model)
                row.repair_without = repair(evaluator, item, False, args.model)
            rows.append(row)
            console.print(
                f"{item.group:12} {item.name:60} {row.status:6} {row.kinds:3} "
                f"{row.without_tokens:6} -> {row.with_tokens:6} {row.repair_with} {row.repair_without} "
                f"{row.seconds:.1f}s"
            )
    markdown = tables(rows, console)
    console.print(f"{len(rows)} near misses, {time.monotonic() - began:.0f} s")
    if args.out is not None:
        args.out.write_text(header + "\n\n" + markdown)


def tables(rows: list[Row], console: Console) -> str:
    lines: list[str] = []
    table = Table(title="First repair prompt: tokens without and with the findings section", title_justify="left")
    columns = [
        "group",
        "near miss",
        "findings",
        "without",
        "with",
        "section",
        "with: repair (iter, tokens)",
        "without: repair (iter, tokens)",
    ]
    for column in columns:
        table.add_column(column)
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "---|" * len(columns))
    for row in rows:
        if row.status != "fail":
            cells = (row.item.group, row.item.name, f"({row.status}: not measured)", "", "", "", "", "")
        else:
            cells = (
                row.item.group,
                row.item.name,
                row.kinds or "none",
                str(row.without_tokens),
                str(row.with_tokens),
                str(row.section_tokens),
                _repair(row.repair_with),
                _repair(row.repair_without),
            )
        table.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    console.print(table)
    summary = Table(title="Per group (measured near misses)", title_justify="left")
    heads = [
        "group",
        "measured",
        "with findings",
        "mean tokens without",
        "mean with",
        "mean section (fired)",
        "repaired with / without",
        "tokens per repair with / without",
    ]
    for column in heads:
        summary.add_column(column)
    lines += ["", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for group in ("fixed", "corpora", "realdiscards"):
        measured = [r for r in rows if r.item.group == group and r.status == "fail"]
        if not measured:
            continue
        fired = [r for r in measured if r.kinds]
        mean = statistics.fmean
        runs_with = [r.repair_with for r in measured if r.repair_with]
        runs_without = [r.repair_without for r in measured if r.repair_without]
        cells = (
            group,
            f"{len(measured)} of {sum(r.item.group == group for r in rows)}",
            str(len(fired)),
            f"{mean(r.without_tokens for r in measured):,.0f}",
            f"{mean(r.with_tokens for r in measured):,.0f}",
            f"{mean(r.section_tokens for r in fired):,.0f}" if fired else "-",
            f"{_repaired(runs_with)} / {_repaired(runs_without)}" if runs_with else "-",
            f"{_per_repair(runs_with)} / {_per_repair(runs_without)}" if runs_with else "-",
        )
        summary.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    console.print(summary)
    return "\n".join(lines) + "\n"


def _repair(run: tuple[str, int, int] | None) -> str:
    return f"{run[0]} ({run[1]}, {run[2]:,})" if run else ""


def _repaired(runs: list[tuple[str, int, int]]) -> str:
    return f"{sum(r[0] == 'repaired' for r in runs)}/{len(runs)}"


def _per_repair(runs: list[tuple[str, int, int]]) -> str:
    done = [r for r in runs if r[0] == "repaired"]
    return f"{sum(r[2] for r in runs) / len(done):,.0f}" if done else "-"


if __name__ == "__main__":
    main()
