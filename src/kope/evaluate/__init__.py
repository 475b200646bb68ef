"""Sandboxed, full-coverage evaluation of candidate kernels.

    with Evaluator() as evaluator:
        result = evaluator.evaluate("task.py", "candidate.py")
        print(result.status, [c.max_abs_err for c in result.cases])
"""

from kope.evaluate.evaluator import EvalOptions, Evaluator
from kope.evaluate.results import CaseResult, EvalError, EvalResult, Finding, Integrity, OutputDiff, Timing

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
