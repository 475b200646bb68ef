"""Sandboxed, full-coverage evaluation of candidate kernels.

    with Evaluator() as evaluator:
        result = evaluator.evaluate("task.py", "candidate.py")
        print(result.status, [c.max_abs_err for c in result.cases])

The package is laid out by process. The modules here are the parent side: the evaluator, compare,
cache, results, the sandbox set-up (`confine`, `landlock`, `seccomp`) and the `sandbox` supervisor.
The supervisor is kope's own code: it runs in a process forked from the fork server (`runner`), sets
up the OS boundary and forks the worker, but never imports task or candidate code. `inside/` holds
what runs in the sandboxed, untrusted process (the worker and what it uses). `protocol` is the only
package both sides import. `tests/test_architecture.py` enforces that.

The names below load lazily, so that a sandboxed process importing `kope.evaluate.inside` or
`kope.evaluate.protocol` does not import the evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.evaluate.evaluator import EvalOptions, Evaluator
    from kope.evaluate.results import (
        CaseResult,
        EvalError,
        EvalResult,
        Finding,
        Integrity,
        OutputDiff,
        Timing,
    )

_HOMES = {
    "EvalOptions": "kope.evaluate.evaluator",
    "Evaluator": "kope.evaluate.evaluator",
    "CaseResult": "kope.evaluate.results",
    "EvalError": "kope.evaluate.results",
    "EvalResult": "kope.evaluate.results",
    "Finding": "kope.evaluate.results",
    "Integrity": "kope.evaluate.results",
    "OutputDiff": "kope.evaluate.results",
    "Timing": "kope.evaluate.results",
}

__all__ = [
    "CaseResult",
    "EvalError",
    "EvalOptions",
    "EvalResult",
    "Evaluator",
    "Finding",
    "Integrity",
    "OutputDiff",
    "Timing",
]


__getattr__ = exports(__name__, _HOMES)
