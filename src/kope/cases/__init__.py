"""Cases: loading a task and its cases, deriving cases for a task that has none, and rendering them.

- `task`: `Task`, `Case`; loading KernelBench-format files; case overrides; a task's `TOLERANCES`.
- `tolerance`: per-dtype tolerances and their named profiles (`strict`, `kernelbench`).
- `derive`: cases derived from a task's single shape (sizes that expose masking and tiling bugs),
  checked by sandboxed shapes jobs whose wire types live in `kope.protocol.probing`; `sizes` holds
  its size model (roots, the shape fit, odd, prime and shrunk values, the element budget),
  `derivation` what it reports, `signal` the low-signal judgement of the reference's outputs.
- `render`: the cases table and the derivation report of `kope cases`.

This package sits below `kope.evaluate`: it imports only `kope.errors`, `kope.syntax` and the
protocol's data types, so that the evaluator, the agents and the CLI can all depend on it.
"""

from kope.cases.derivation import Derivation
from kope.cases.derive import derive
from kope.cases.render import cases_table, derivation_report
from kope.cases.task import (
    Case,
    OverrideValue,
    Task,
    build_cases,
    load_cases_file,
    load_task,
    override_notes,
    parse_set,
    parse_tolerances,
)
from kope.cases.tolerance import Tolerance, ToleranceChoice, resolve_profile, tolerance_for

__all__ = [
    "Case",
    "Derivation",
    "OverrideValue",
    "Task",
    "Tolerance",
    "ToleranceChoice",
    "build_cases",
    "cases_table",
    "derivation_report",
    "derive",
    "load_cases_file",
    "load_task",
    "override_notes",
    "parse_set",
    "parse_tolerances",
    "resolve_profile",
    "tolerance_for",
]
