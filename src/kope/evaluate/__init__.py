"""Sandboxed, full-coverage evaluation of candidate kernels.

    with Evaluator() as evaluator:
        result = evaluator.evaluate("task.py", "candidate.py")
        print(result.status, [c.max_abs_err for c in result.cases])

The package is laid out by process. The modules here are the parent side: the evaluator, compare,
cache, the sandbox set-up (`confine`, `landlock`, `seccomp`) and the `sandbox` supervisor.
The supervisor is kope's own code: it runs in a process forked from the fork server (`runner`), sets
up the OS boundary and forks the worker, but never imports task or candidate code. `inside/` holds
what runs in the sandboxed, untrusted process (the worker and what it uses). `kope.protocol` (the
job, result and report types, below this package) is the only kope package both sides import.
`tests/test_architecture.py` enforces that.

The names below load lazily, so that a sandboxed process importing `kope.evaluate.inside` or
`kope.protocol` does not import the evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.evaluate.evaluator import Evaluator
    from kope.evaluate.options import EvalOptions

_HOMES = {
    "EvalOptions": "kope.evaluate.options",
    "Evaluator": "kope.evaluate.evaluator",
}

__all__ = ["EvalOptions", "Evaluator"]


__getattr__ = exports(__name__, _HOMES)
