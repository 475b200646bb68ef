"""Offline repair rate (Pass@1) on labelled near-miss corpora, with zero tokens: before against after.

For every kernel of the manifests (default: src/kope/corpora/fixtures/manifest.json), run `kope
debug` with the offline model and count it repaired only if the returned kernel passes every case
and the integrity gates. Two arms, side by side in one run (`--repair both`, the default):

- `recipes`: the model before the search: one recipe edit of the top hypotheses per step;
- `search`: the bounded best-first search over repair operators and recipes (kope.repair.search).

Prints per arm: Pass@1 per taxonomy id and overall, evaluations per repair, seconds per repair
(median), and the diagnosis's top-1 / top-3 (the label among the first hypotheses).

Manifests: a list of entries `{file, label, op | task}` (`task`: a task file relative to the
manifest), or a mutation-suite manifest (`kope bench mutate`: `{entries: [{candidate, task, label}]}`).

Usage: .venv/bin/python benchmarks/offline_repair.py [--manifest PATH ...] [--repair recipes|search|both]
       [--limit N] [--every N] [--only ID ...] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.agents import DebugConfig, DebugLoop, DebugReport
from kope.bench.corpus import load_suite
from kope.evaluate import Evaluator
from kope.ops import get_op

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MANIFEST = ROOT / "src" / "kope" / "corpora" / "fixtures" / "manifest.json"


@dataclass(frozen=True)
class Entry:
    id: str
    candidate: Path
    task: Path
    label: str


def task_path(spec: str, folder: Path) -> Path:
    """`op:NAME` or an op name: the built-in operator's task; anything else a path relative to the manifest."""
    name = spec.removeprefix("op:")
    if spec.startswith("op:"):
        return get_op(name).task_path
    return (folder / spec).resolve()


def entries(manifests: list[Path]) -> list[Entry]:
    found: list[Entry] = []
    for manifest in manifests:
        data = json.loads(manifest.read_text())
        folder = manifest.parent
        if isinstance(data, dict):  # a mutation suite: its candidates may have to be remade (the default suite)
            suite = load_suite(manifest)
            found += [Entry(e.id, suite.candidate_path(e), suite.task_path(e), e.label) for e in suite.entries]
            continue
        for item in data:
            task = get_op(item["op"]).task_path if "op" in item else task_path(item["task"], folder)
            found.append(Entry(item["file"], folder / item["file"], task, item["label"]))
    return found


def repair(evaluator: Evaluator, entry: Entry, scratch: Path, arm: str) -> DebugReport:
    loop = DebugLoop(None, evaluator, config=DebugConfig(search=arm == "search"))
    out = scratch / arm / f"{entry.id.replace('/', '__')}.repaired.py"
    out.parent.mkdir(parents=True, exist_ok=True)
    return loop.run(entry.task, entry.candidate, out)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, action="append")
    parser.add_argument("--repair", choices=("recipes", "search", "both"), default="both")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--every", type=int, default=1, help="a fixed sample: every N-th entry")
    parser.add_argument("--only", action="append", default=[], help="entry ids to run (repeatable)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--json", type=Path, help="also write every report here (and each as it ends to JSON.partial.jsonl)"
    )
    args = parser.parse_args()
    items = entries(args.manifest or [DEFAULT_MANIFEST])[:: max(1, args.every)]
    if args.only:
        items = [e for e in items if e.id in args.only]
    if args.limit:
        items = items[: args.limit]
    arms = ["recipes", "search"] if args.repair == "both" else [args.repair]
    console = Console()
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, device cpu (Triton interpreter), {len(items)} kernels, arms {arms}"
    )
    began = time.monotonic()
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as scratch, Evaluator(max_parallel=2) as evaluator:

        def run(job: tuple[Entry, str]) -> tuple[Entry, str, DebugReport]:
            entry, arm = job
            report = repair(evaluator, entry, Path(scratch), arm)
            if args.json:
                with lock, args.json.with_suffix(".partial.jsonl").open("a") as handle:
                    handle.write(
                        json.dumps(
                            {
                                "id": entry.id,
                                "label": entry.label,
                                "arm": arm,
                                "status": report.status,
                                "evaluations": report.evaluations,
                                "seconds": report.seconds,
                                "hypotheses": report.hypotheses[:5],
                            }
                        )
                        + "\n"
                    )
            console.print(
                f"  {arm:7s} {entry.id:44s} {entry.label:22s} {report.status:10s} "
                f"{report.evaluations:3d} eval(s) {report.seconds:6.1f} s ({report.stop_reason})"
            )
            return entry, arm, report

        jobs = [(entry, arm) for entry in items for arm in arms]
        with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
            results = list(pool.map(run, jobs))
    total = time.monotonic() - began
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "id": e.id,
                        "label": e.label,
                        "arm": arm,
                        **r.model_dump(mode="json", exclude={"steps", "search"}),
                        "search_trials": [[t.model_dump(mode="json") for t in s.trials] for s in r.search],
                    }
                    for e, arm, r in results
                ],
                indent=1,
            )
        )
    summary = Table(title="offline repair, zero tokens: before (recipes) against after (search)")
    for column in (
        "arm",
        "kernels",
        "Pass@1",
        "evals / repair (median)",
        "evals (mean)",
        "s / repair (median)",
        "s (median, repaired)",
        "diag. top-1",
        "diag. top-3",
    ):
        summary.add_column(column, justify="left" if column == "arm" else "right")
    for arm in arms:
        rows = [(e, r) for e, a, r in results if a == arm]
        reports = [r for _, r in rows]
        repaired = [r for r in reports if r.status == "repaired"]
        top1 = sum(bool(r.hypotheses) and r.hypotheses[0] == e.label for e, r in rows)
        top3 = sum(e.label in r.hypotheses[:3] for e, r in rows)
        n = max(1, len(rows))
        summary.add_row(
            arm,
            str(len(rows)),
            f"{len(repaired)}/{len(rows)} ({len(repaired) / n:.1%})",
            f"{_median([r.evaluations for r in reports]):.0f}",
            f"{statistics.mean([r.evaluations for r in reports]) if reports else 0:.1f}",
            f"{_median([r.seconds for r in reports]):.1f}",
            f"{_median([r.seconds for r in repaired]):.1f}",
            f"{top1 / n:.1%}",
            f"{top3 / n:.1%}",
        )
        by_label: dict[str, list[DebugReport]] = defaultdict(list)
        for e, r in rows:
            by_label[e.label].append(r)
        table = Table(title=f"{arm}: Pass@1 per taxonomy id")
        for column in ("taxonomy id", "repaired", "kernels", "median evals", "median s"):
            table.add_column(column, justify="left" if column == "taxonomy id" else "right")
        for label in sorted(by_label):
            group = by_label[label]
            table.add_row(
                label,
                str(sum(r.status == "repaired" for r in group)),
                str(len(group)),
                f"{_median([r.evaluations for r in group]):.0f}",
                f"{_median([r.seconds for r in group]):.1f}",
            )
        console.print(table)
        console.print(
            f"{arm}: tokens spent {sum(r.tokens.prompt + r.tokens.completion for r in reports)}; "
            f"rejected by the gates: {sum(r.rejected_versions for r in reports)}"
        )
    console.print(summary)
    console.print(f"whole run: {total:.0f} s with {args.workers} worker(s)")


if __name__ == "__main__":
    main()
