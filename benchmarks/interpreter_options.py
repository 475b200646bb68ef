"""What an interpreter option changes, side by side in one run: one evaluation of each kernel on its first derived
case (one trial, no gates, the reference cached, sandboxed as always), with the option off and on, in alternating
order. `--option overflow_check` (Triton's integer-overflow sanitiser; kope's default off) or `--option
gpu_frontend` (Triton's GPU front end on every launch; kope's default on).

It says where the two disagree (a kernel one of them turns into an error, or whose values change) and, for a
real-discard manifest, each kernel's verdict in its own pipeline (`source`: its GPU's), so a kernel the GPU ran
that the option turns into an error is a false rejection, and one the GPU refused that it catches is a fix.

Manifests: a hand-written corpus's manifest.json (`[{file, task, ...}]`, tasks relative to it) or a real-discard
manifest.csv (benchmarks/realdiscards: `task`, `candidate` relative to its folder's `tasks/` and itself), whose
rows `--split` and `--match` (a substring of the id) choose.

Usage: .venv/bin/python benchmarks/interpreter_options.py --option gpu_frontend [--manifest PATH ...]
       [--split dev2] [--match TEXT] [--elements 4096] [--limit N]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import platform
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.cases.task import load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import EvalResult, ModuleMode

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "src/kope/corpora/handwritten7/manifest.json"


@dataclasses.dataclass(frozen=True)
class Kernel:
    name: str
    task: Path
    candidate: Path
    module_mode: str = "train"
    source: str = ""


def kernels(manifest: Path, split: str | None, match: str | None) -> list[Kernel]:
    if manifest.suffix == ".json":
        items = json.loads(manifest.read_text())
        found = [Kernel(i["file"], manifest.parent / i["task"], manifest.parent / i["file"]) for i in items]
    else:
        with manifest.open(newline="") as handle:
            rows = [r for r in csv.DictReader(handle) if split is None or r["split"] == split]
        folder = manifest.parent
        found = [
            Kernel(
                r["id"],
                folder / "tasks" / r["task"],
                folder / r["candidate"],
                r.get("module_mode") or "train",
                r.get("source_verdict", ""),
            )
            for r in rows
        ]
    return [k for k in found if match is None or match in k.name]


def _outcome(result: EvalResult) -> str:
    case = result.cases[0] if result.cases else None
    if case is None or case.error is not None:
        kind = case.error.kind if case and case.error else result.error.kind if result.error else "?"
        return f"error ({kind})"
    return "right" if case.passed else f"wrong ({case.mismatch_count}/{case.numel})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--option", choices=("overflow_check", "gpu_frontend"), default="overflow_check")
    parser.add_argument("--manifest", type=Path, action="append")
    parser.add_argument("--split")
    parser.add_argument("--match")
    parser.add_argument("--elements", type=int, default=4096, help="input elements of the derived case")
    parser.add_argument("--limit", type=int, help="the first N kernels only")
    args = parser.parse_args()
    chosen = [k for m in args.manifest or [DEFAULT] for k in kernels(m, args.split, args.match)][: args.limit]
    console = Console(width=200)
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, cpu (Triton interpreter); {len(chosen)} kernels, "
        f"first derived case at {args.elements} input elements, 1 trial, no gates; {args.option} off and on"
    )
    table = Table("kernel", "source", "off (s)", "on (s)", "on / off", "off", "on")
    ratios: list[float] = []
    differ = 0
    turned: dict[str, list[int]] = {}  # source verdict -> [kernels, errors only with the option on, only off]
    with Evaluator(max_parallel=1) as evaluator:
        for index, kernel in enumerate(chosen):
            task = load_task(kernel.task)
            mode: ModuleMode = "eval" if kernel.module_mode == "eval" else "train"
            base = EvalOptions(trials=1, integrity=False, max_elements=args.elements, timeout_s=300, module_mode=mode)
            try:
                cases = evaluator.cases(task, options=base)[:1]
            except Exception as exc:  # a task the derivation refuses is a row, not the end of the run
                table.add_row(kernel.name, kernel.source, "", "", "", f"no cases: {type(exc).__name__}", "")
                continue
            evaluator.evaluate(task, kernel.candidate, options=base, cases=cases)  # the reference cached, warm
            seconds: dict[bool, float] = {}
            outcome: dict[bool, str] = {}
            for check in (False, True) if index % 2 == 0 else (True, False):
                began = time.perf_counter()
                result = evaluator.evaluate(
                    task, kernel.candidate, options=dataclasses.replace(base, **{args.option: check}), cases=cases
                )
                seconds[check] = time.perf_counter() - began
                outcome[check] = _outcome(result)
            ratio = seconds[True] / seconds[False]
            differ += outcome[True] != outcome[False]
            counts = turned.setdefault(kernel.source or "-", [0, 0, 0])
            counts[0] += 1
            counts[1] += outcome[True].startswith("error") and not outcome[False].startswith("error")
            counts[2] += outcome[False].startswith("error") and not outcome[True].startswith("error")
            ratios.append(ratio)
            table.add_row(
                kernel.name[-70:],
                kernel.source,
                f"{seconds[False]:.2f}",
                f"{seconds[True]:.2f}",
                f"{ratio:.2f}",
                outcome[False],
                outcome[True],
            )
    console.print(table)
    if ratios:
        console.print(
            f"on / off: median {statistics.median(ratios):.2f}, min {min(ratios):.2f}, max {max(ratios):.2f}; "
            f"outcomes differ on {differ} of {len(ratios)}"
        )
        by_source = Table("source verdict", "kernels", "an error only with it on", "an error only with it off")
        for source, (total, on, off) in sorted(turned.items()):
            by_source.add_row(source, str(total), str(on), str(off))
        console.print(by_source)


if __name__ == "__main__":
    main()
