"""Evaluate the built-in suite on a CUDA GPU with timing: correctness and speedup over PyTorch.

Every operator's kernel is evaluated on every case with `--device cuda` and timing on (median of
timed runs with a cache flush and device-wide synchronisation, for the kernel and for the reference
module in its own process). Prints a table and writes a JSON file of the numbers for docs/.

Usage (on a machine with an NVIDIA GPU): .venv/bin/python benchmarks/cuda_suite.py [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.device import cuda_present
from kope.evaluate import EvalOptions, Evaluator
from kope.ops import list_ops


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("cuda_suite.json"))
    parser.add_argument("--budget-ms", type=float, default=200.0, help="timing budget per measurement")
    args = parser.parse_args()
    console = Console()
    if not cuda_present():
        console.print("no NVIDIA driver on this machine: nothing to measure")
        return 1
    options = EvalOptions(device="cuda", timing=True, timing_budget_ms=args.budget_ms, trials=3)
    rows = []
    table = Table(title=f"operator suite on CUDA ({platform.node()}, {time.strftime('%Y-%m-%d')})")
    for column in ("operator", "status", "case", "kernel ms", "PyTorch ms", "speedup"):
        table.add_column(column, justify="left" if column in ("operator", "status", "case") else "right")
    with Evaluator() as evaluator:
        for op in list_ops():
            result = evaluator.evaluate(op.task_path, op.kernel_path, options=options)
            for case in result.cases:
                timing = case.timing
                rows.append(
                    {
                        "op": op.name,
                        "status": result.status,
                        "case": case.name,
                        "passed": case.passed,
                        "kernel_ms": timing.candidate_ms if timing else None,
                        "reference_ms": timing.reference_ms if timing else None,
                        "speedup": timing.speedup if timing else None,
                        "findings": [f.rule for f in result.integrity.findings],
                    }
                )
                table.add_row(
                    op.name,
                    result.status,
                    case.name,
                    f"{timing.candidate_ms:.4f}" if timing else "-",
                    f"{timing.reference_ms:.4f}" if timing and timing.reference_ms else "-",
                    f"{timing.speedup:.2f}" if timing and timing.speedup else "-",
                )
    console.print(table)
    speedups = [r["speedup"] for r in rows if r["speedup"]]
    if speedups:
        geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        console.print(f"geometric-mean speedup over PyTorch: {geomean:.2f}x over {len(speedups)} cases")
    args.out.write_text(json.dumps({"machine": platform.node(), "python": sys.version, "rows": rows}, indent=1))
    return 0 if all(r["passed"] for r in rows) else 2


if __name__ == "__main__":
    raise SystemExit(main())
