"""kope: repair and optimize hardware kernels with LLM agents, honestly, and learn from every run.

The names below load lazily (PEP 562), so that importing a submodule, e.g. in the sandboxed
worker, does not import the evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.cases import Case, Task, load_task
    from kope.errors import (
        CandidateFileError,
        CaseError,
        KopeError,
        ReferenceError_,
        SandboxError,
        TaskError,
        TaskFileError,
    )
    from kope.evaluate import EvalOptions, Evaluator
    from kope.protocol.results import EvalResult

__version__ = "0.1.0"

_HOMES = {
    "CandidateFileError": "kope.errors",
    "CaseError": "kope.errors",
    "KopeError": "kope.errors",
    "ReferenceError_": "kope.errors",
    "SandboxError": "kope.errors",
    "TaskError": "kope.errors",
    "TaskFileError": "kope.errors",
    "EvalOptions": "kope.evaluate.options",
    "EvalResult": "kope.protocol.results",
    "Evaluator": "kope.evaluate.evaluator",
    "Case": "kope.cases.task",
    "Task": "kope.cases.task",
    "load_task": "kope.cases.task",
}

__all__ = [
    "CandidateFileError",
    "Case",
    "CaseError",
    "EvalOptions",
    "EvalResult",
    "Evaluator",
    "KopeError",
    "ReferenceError_",
    "SandboxError",
    "Task",
    "TaskError",
    "TaskFileError",
    "__version__",
    "load_task",
]


__getattr__ = exports(__name__, _HOMES)
