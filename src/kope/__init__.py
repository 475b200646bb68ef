"""kope: repair and optimize hardware kernels with LLM agents, honestly, and learn from every run."""

from kope.errors import (
    CandidateFileError,
    CaseError,
    KopeError,
    ReferenceError_,
    SandboxError,
    TaskError,
    TaskFileError,
)
from kope.evaluate import EvalOptions, EvalResult, Evaluator
from kope.task import Case, Task, load_task

__version__ = "0.1.0"

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
