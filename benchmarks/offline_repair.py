"""Offline repair rate (Pass@1) on labelled near-miss corpora, with zero tokens.

For every kernel of the manifests (default: tests/fixtures/near_miss/manifest.json), run `kope
debug` with the offline recipe model and count it repaired only if the returned kernel passes every
case and the integrity gates. Prints Pass@1 per taxonomy id and overall, iterations and wall time per
repair, and the prompt sizes the loop built (the packer's budget must never be exceeded).

Usage: .venv/bin/python benchmarks/offline_repair.py [--manifest PATH ...] [--limit N] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.agents import DebugConfig, DebugLoop, DebugReport
from kope.evaluate import Evaluator
from kope.models.offline import OfflineModel
from kope.ops import get_op

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MANIFEST = ROOT / "tests" / "fixtures" / "near_miss" / "manifest.json"


def entries(manifests: list[Path]) -> list[tuple[dict[str, str], Path]]:
    found = []
    for manifest in manifests:
        for item in json.loads(manifest.read_text()):
            found.append((item, manifest.parent))
    return found


def repair(evaluator: Evaluator, item: dict[str, str], folder: Path, scratch: Path) -> DebugReport:
    task = get_op(item["op"]).task_path if "op" in item else ROOT / item["task"]
    loop = DebugLoop(OfflineModel(), evaluator, config=DebugConfig())
    return loop.run(task, folder / item["file"], scratch / f"{Path(item['file']).stem}.repaired.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, action="append")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    items = entries(args.manifest or [DEFAULT_MANIFEST])
    if args.limit:
        items = items[: args.limit]
    console = Console()
    console.print(f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
                  f"{time.strftime('%Y-%m-%d')}, device cpu (Triton interpreter), {len(items)} kernels")
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch, Evaluator(max_parallel=2) as evaluator:
        def run(entry: tuple[dict[str, str], Path]) -> tuple[dict[str, str], DebugReport]:
            item, folder = entry
            report = repair(evaluator, item, folder, Path(scratch))
            console.print(f"  {item['file']:44s} {item['label']:22s} {report.status:10s} "
                          f"{report.iterations} step(s) {report.seconds:6.1f} s ({report.stop_reason})")
            return item, report

        with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
            results = list(pool.map(run, items))
    total = time.monotonic() - began
    by_label: dict[str, list[DebugReport]] = defaultdict(list)
    for item, report in results:
        by_label[item["label"]].append(report)
    table = Table(title="offline repair (Pass@1, zero tokens)")
    for column in ("taxonomy id", "repaired", "kernels", "Pass@1", "median steps", "median s"):
        table.add_column(column, justify="left" if column == "taxonomy id" else "right")
    for label in sorted(by_label):
        reports = by_label[label]
        repaired = [r for r in reports if r.status == "repaired"]
        table.add_row(
            label, str(len(repaired)), str(len(reports)), f"{len(repaired) / len(reports):.0%}",
            f"{statistics.median(r.iterations for r in reports):.0f}",
            f"{statistics.median(r.seconds for r in reports):.1f}",
        )
    reports = [r for _, r in results]
    repaired = [r for r in reports if r.status == "repaired"]
    table.add_row("all", str(len(repaired)), str(len(reports)), f"{len(repaired) / max(1, len(reports)):.1%}",
                  f"{statistics.median(r.iterations for r in reports):.0f}",
                  f"{statistics.median(r.seconds for r in reports):.1f}")
    console.print(table)
    tokens = sum(r.tokens.prompt + r.tokens.completion for r in reports)
    packed = [s.prompt_tokens_packed for r in reports for s in r.steps]
    dropped = sum(1 for r in reports for s in r.steps if s.dropped_sections)
    console.print(f"tokens spent: {tokens}; rejected by the gates: {sum(r.rejected_versions for r in reports)}")
    if packed:
        console.print(f"prompts built: {len(packed)}, largest {max(packed)} tokens (budget {DebugConfig().prompt_budget}); "
                      f"steps where the packer dropped a section: {dropped}")
    if repaired:
        console.print(f"per repair: median {statistics.median(r.iterations for r in repaired):.0f} step(s), "
                      f"median {statistics.median(r.seconds for r in repaired):.1f} s")
    console.print(f"whole run: {total:.0f} s with {args.workers} worker(s)")


if __name__ == "__main__":
    main()
