"""Memory ablation: the offline optimizer over the operator suite, in order, with memory and without.

For each operator (suite order, or the --families / --ops given), two runs of `kope optimize` with
the offline launch-parameter search, back to back on the same machine:

- with memory: one experience store shared by the whole sequence; each run is seeded with the best
  configurations found for earlier operators on this device and orders its moves by what helped;
- without: the same search with no store (no seeds, default move order).

Reported per operator and overall: evaluations needed to reach the run's best version (1 = the
start was best), the final speedup over the starting kernel, and the geometric mean. On the CPU
the time is the Triton interpreter's wall time (interpreter-wall); with --device cuda it is real.

Usage: .venv/bin/python benchmarks/memory_ablation.py [--families elementwise,reduction] [--iterations 6]
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.agents.optimize import OptimizeConfig, OptimizeLoop, OptimizeReport
from kope.evaluate import EvalOptions, Evaluator
from kope.memory import ExperienceStore
from kope.ops import list_ops


def run(
    evaluator: Evaluator, op_name: str, store: ExperienceStore | None, config: OptimizeConfig, scratch: Path
) -> OptimizeReport:
    op = next(o for o in list_ops() if o.name == op_name)
    loop = OptimizeLoop(None, evaluator, config=config, store=store)
    return loop.run(op.task_path, op.kernel_path, scratch / f"{op.name}.{'mem' if store else 'none'}.py")


def speedup(report: OptimizeReport) -> float:
    """The confirmed speedup where one was measured, else the search's own (1.0 when nothing beat the start)."""
    if report.status != "improved":
        return 1.0
    return report.confirmed_speedup_vs_start or report.speedup_vs_start or 1.0


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", default="", help="comma-separated operator families (default: all)")
    parser.add_argument("--ops", default="", help="comma-separated operator names (default: all)")
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--timing-budget-ms", type=float, default=100.0)
    parser.add_argument("--store", type=Path, default=None, help="keep the with-memory store here")
    parser.add_argument(
        "--confirm",
        type=int,
        default=0,
        help="re-measure start and best this many times each (speedups then use those medians)",
    )
    args = parser.parse_args()
    families = {f for f in args.families.split(",") if f}
    names = {n for n in args.ops.split(",") if n}
    ops = [op.name for op in list_ops() if (not families or op.family in families) and (not names or op.name in names)]
    console = Console(width=150)
    console.print(
        f"machine: {platform.node()}, {platform.machine()}, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}, device {args.device}, {len(ops)} operators, "
        f"{args.iterations} decisions per run"
    )
    options = EvalOptions(device=args.device, trials=args.trials, timing=True, timing_budget_ms=args.timing_budget_ms)
    config = OptimizeConfig(iterations=args.iterations, options=options, confirm=args.confirm)
    scratch = Path(tempfile.mkdtemp(prefix="kope-ablation-"))
    store_path = args.store or scratch / "memory.db"
    rows: list[tuple[str, str, OptimizeReport, OptimizeReport]] = []
    began = time.monotonic()
    with Evaluator() as evaluator, ExperienceStore.open(store_path) as store:
        for name in ops:
            family = next(o.family for o in list_ops() if o.name == name)
            with_memory = run(evaluator, name, store, config, scratch)
            without = run(evaluator, name, None, config, scratch)
            rows.append((name, family, with_memory, without))
            console.print(
                f"{name}: with memory {speedup(with_memory):.2f}x at evaluation "
                f"{with_memory.best_found_at}; without {speedup(without):.2f}x at evaluation "
                f"{without.best_found_at}  ({time.monotonic() - began:.0f} s)"
            )
    table = Table(
        title=f"Offline optimization with and without memory ({rows[0][2].timing_method if rows else ''})",
        title_justify="left",
    )
    for column in (
        "operator",
        "family",
        "evals to best (memory)",
        "evals to best (none)",
        "speedup (memory)",
        "speedup (none)",
        "first decision (memory)",
    ):
        table.add_column(column)
    for name, family, mem, none in rows:
        first = next((n.decision for n in mem.trajectory if n.index == 1), "")
        table.add_row(
            name,
            family,
            str(mem.best_found_at),
            str(none.best_found_at),
            f"{speedup(mem):.2f}",
            f"{speedup(none):.2f}",
            first[:60],
        )
    console.print(table)
    mem_speed = [speedup(r[2]) for r in rows]
    none_speed = [speedup(r[3]) for r in rows]
    mem_evals = [r[2].best_found_at or 1 for r in rows]
    none_evals = [r[3].best_found_at or 1 for r in rows]
    summary = Table(title="Summary", title_justify="left")
    for column in ("arm", "geomean speedup over start", "mean evaluations to best", "median", "evaluations in all"):
        summary.add_column(column)
    summary.add_row(
        "with memory",
        f"{geomean(mem_speed):.3f}",
        f"{statistics.fmean(mem_evals):.2f}",
        f"{statistics.median(mem_evals):.1f}",
        str(sum(r[2].evaluations for r in rows)),
    )
    summary.add_row(
        "without",
        f"{geomean(none_speed):.3f}",
        f"{statistics.fmean(none_evals):.2f}",
        f"{statistics.median(none_evals):.1f}",
        str(sum(r[3].evaluations for r in rows)),
    )
    console.print(summary)
    seeded_first = sum(1 for r in rows if any(n.params and n.params.get("seed") for n in r[2].trajectory))
    console.print(
        f"runs with a memory seed: {seeded_first}/{len(rows)}; wall time {time.monotonic() - began:.0f} s; "
        f"store {store_path}"
    )


if __name__ == "__main__":
    main()
