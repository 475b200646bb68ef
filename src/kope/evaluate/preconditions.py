"""A candidate's own precondition: the host-code statement with which it refuses sizes it was not written for.

Real kernels state what they support: `assert H % 2 == 0, "H and W must be even for 2x2 avgpool"`, `if groups != 1:
raise NotImplementedError(...)`. On the task's own sizes such a statement holds; on a derived case of other sizes
it can refuse the case before anything is computed. That refusal says nothing of the kernel's values, so the case
is not judged (`CaseResult.outside`), where, and only where, all of this holds:

- the case is one of kope's derived cases of sizes other than the task's own, and not the first one: the first
  case holds the task's own sizes, or their shrunk stand-in (the task's proportions and alignment), and a kernel
  that refuses it refuses the task (`assert D % 2 == 0` where the task's own `D` is 31); a task's `get_cases()`
  lists requirements, so a refusal there is the kernel's error too (the parent decides all of this);
- the run stopped on its first trial, before any output (a later trial's refusal is the kernel's behaviour);
- the traceback's innermost frame is the candidate's file, at a line of its *host* code (not a Triton kernel) that
  is an `assert` statement, or a `raise` of `AssertionError`, `ValueError`, `NotImplementedError` or
  `RuntimeError`, and the error's type is the one that statement raises; or the GPU compiler refuses a `tl.dot` of
  the candidate's kernel for its shape ("Input shapes should have M >= 1, N >= 1 and K >= 16": a kernel whose
  blocks follow the sizes down, `BLOCK_K = triton.next_power_of_2(K)` below 64, cannot multiply blocks that small on
  any GPU). The compiler states that limit for the kernel, as an `assert K >= 16` would. The refusal must point at
  a `tl.dot` call of one of the candidate's kernels: the compiler's words raised from host code do not count.

A hostile candidate gains nothing it could not write honestly: a refusal only removes a case from the judgement,
never adds a pass; the status rule (`kope.evaluate.assembly`) asks that some case be judged, and that every case of
another input distribution be, before a pass (those cases share the first case's sizes: a refusal there depends on
the values, not the sizes).
"""

from __future__ import annotations

import ast
import re

from kope.protocol import CANDIDATE_FILE
from kope.protocol.results import EvalError
from kope.source import call_name
from kope.source.parse import ParsedSource

RAISED = frozenset({"AssertionError", "ValueError", "NotImplementedError", "RuntimeError"})
"""The builtin errors a precondition raises (a candidate's own exception class is not one of them)."""

_FRAME = re.compile(r'^\s*File "([^"\n]*)", line (\d+)', re.MULTILINE)
_STAGES = ("forward failed on trial 0: ", "constructing ModelNew failed: ")
"""Where a refusal may stop the run: constructing the model, or the first trial's forward (before any output)."""


_DOT_SHAPE = re.compile(
    r"GpuCompileError: Triton's GPU compiler refuses `[^`\n]+`: (Input shapes should have M >= \d+, N >= \d+ and "
    r"K >= \d+)(?: \(candidate line (\d+):)?"
)
"""The GPU compiler's refusal of a `tl.dot` whose blocks are smaller than the hardware multiplies."""


def refusal(error: EvalError, source: str) -> str | None:
    """The statement of the candidate's host code that refused the case (`line 166: assert H % 2 == 0`), or the GPU
    compiler's minimum `tl.dot` shape; None where the error is not such a refusal (see the module's rules; the caller
    checks the case's sizes)."""
    if error.kind not in ("runtime", "load") or not error.message.startswith(_STAGES):
        return None
    dot = _DOT_SHAPE.match(error.message.split(": ", 1)[1])
    if dot is not None:
        line = int(dot.group(2) or 0)
        if not _dot_in_kernel(source, line):  # the message's words alone, raised from elsewhere: not the compiler's
            return None
        return f"the GPU compiler's minimum `tl.dot` shape at line {line}: {dot.group(1)}"
    if not error.traceback:
        return None
    frames = _FRAME.findall(error.traceback)
    if not frames or frames[-1][0].rsplit("/", 1)[-1] != CANDIDATE_FILE:
        return None
    line = int(frames[-1][1])
    raised = _raised_type(error.message)
    parsed = ParsedSource.parse(source)
    if parsed is None or raised is None:
        return None
    statement = _statement_at(parsed, line)
    if statement is None or _raises(statement) != raised:
        return None
    text = ast.get_source_segment(source, statement) or ""
    return f"line {line}: {' '.join(text.split())[:160]}"


def _dot_in_kernel(source: str, line: int) -> bool:
    """Whether the candidate's `line` is a `tl.dot` call of one of its Triton kernels (where the compiler's
    refusal points): a host line that raises an error with the compiler's words does not count."""
    parsed = ParsedSource.parse(source)
    if parsed is None or line <= 0:
        return False
    return any(
        isinstance(node, ast.Call)
        and call_name(node, last=True) == "dot"
        and node.lineno <= line <= (node.end_lineno or 0)
        for kernel in parsed.kernels
        for node in ast.walk(kernel)
    )


def _raised_type(message: str) -> str | None:
    """The exception type the worker's message names (`forward failed on trial 0: AssertionError: ...`)."""
    head = message.split(": ", 2)
    return head[1] if len(head) >= 2 and head[1] in RAISED else None


def _statement_at(parsed: ParsedSource, line: int) -> ast.stmt | None:
    """The innermost `assert` or `raise` statement of host code spanning `line` (None inside a Triton kernel)."""
    inside = {id(node) for kernel in parsed.kernels for node in ast.walk(kernel)}
    found: ast.stmt | None = None
    for node in ast.walk(parsed.tree):
        if not isinstance(node, (ast.Assert, ast.Raise)) or id(node) in inside:
            continue
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            found = node
    return found


def _raises(statement: ast.stmt) -> str | None:
    """The builtin error type a statement raises: `AssertionError` for `assert`, the named class for a `raise`."""
    if isinstance(statement, ast.Assert):
        return "AssertionError"
    if not isinstance(statement, ast.Raise) or statement.exc is None:
        return None
    exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return exc.id if isinstance(exc, ast.Name) and exc.id in RAISED else None


def not_judged(error: EvalError, refused: str) -> EvalError:
    """A refused case's error: `unsupported` (a limit of this case, not of the kernel's values), its message kept."""
    return error.model_copy(
        update={
            "kind": "unsupported",
            "message": f"not judged: the candidate's own precondition ({refused}) refuses this case's sizes, which "
            f"are not the task's own ({error.message})",
            "hint": "the kernel states what it supports; it is judged on the cases it accepts",
        }
    )


def unjudged(refused: int, reason: str) -> EvalError:
    """The evaluation's error where the refusals leave too little judged for a verdict (see the module's rules)."""
    return EvalError(
        kind="unsupported",
        message=f"the candidate's own precondition refuses {refused} case(s) of other sizes, {reason}: not judged here",
        hint="judge it at the task's own sizes (on a GPU with --device cuda where they do not fit the CPU's budget), "
        "or give cases it accepts (a task's get_cases(), --set NAME=VALUE)",
    )
