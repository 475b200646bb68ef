"""The bench: the default near-miss suite (built from its manifest), the harness that runs arms on it, the report.

suite = load_suite("default")              # the shipped suite, remade from its manifest on first use
summary = run_bench(suite, strategy="debug", model="offline", out=Path("runs/a"))
write_report([Path("runs/a")], Path("report"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.bench.corpus import Suite, SuiteEntry, SuiteError, load_suite
    from kope.bench.harness import BenchError, run_bench
    from kope.bench.metrics import Metrics
    from kope.bench.report import write_report

_HOMES = {
    "BenchError": "kope.bench.harness",
    "Metrics": "kope.bench.metrics",
    "Suite": "kope.bench.corpus",
    "SuiteEntry": "kope.bench.corpus",
    "SuiteError": "kope.bench.corpus",
    "load_suite": "kope.bench.corpus",
    "run_bench": "kope.bench.harness",
    "write_report": "kope.bench.report",
}

__all__ = [
    "BenchError",
    "Metrics",
    "Suite",
    "SuiteEntry",
    "SuiteError",
    "load_suite",
    "run_bench",
    "write_report",
]

__getattr__ = exports(__name__, _HOMES)
