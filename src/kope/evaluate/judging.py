"""What an evaluation's numbers mean beyond pass and fail.

- Where the tolerance profiles disagree: every case is compared under each profile from the same
  outputs (`CaseResult.passed_under`), so a kernel that the benchmark would pass and kope's strict
  profile fails says so, with the error measured, without running anything again.
- Limits that account for a failure, so that it does not read as a wrong kernel: a reference whose values depend
  on random draws (dropout in training mode: two runs on the same inputs differ, so no kernel matches it); and
  platform limits:
  `tl.dot` on bfloat16 in the Triton interpreter (Triton 3.7.1 returns results off by orders of
  magnitude: a 32x32x32 bf16 dot was off by 4.6e10 where the float16 one was off by 2e-6), and
  `tl.dot` in TF32 on a GPU (the default precision of float32 operands: a 10-bit mantissa, errors
  near 1e-3 that fail the strict profile and pass the kernelbench one). The interpreter computes a
  TF32 dot in full float32, so on the CPU only the bf16 limit applies.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence
from typing import Literal

from kope.protocol import AutotuneRun
from kope.protocol.results import CaseResult, EvalResult, ProfileDisagreement
from kope.source import ParsedSource

BF16_DOT = (
    "interpreter-limit: bf16 tl.dot is inexact in the Triton interpreter (off by orders of magnitude in "
    "Triton 3.7); judge this kernel on a GPU (--device cuda)"
)
TF32_DOT = (
    "tf32: tl.dot runs float32 operands in TF32 on the GPU (a 10-bit mantissa) unless input_precision='ieee'; "
    "the error is within what TF32 gives (the kernelbench tolerance passes)"
)
_TF32_PRECISIONS = frozenset({"tf32", "tf32x3"})


def random_reference(operation: str) -> str:
    """The limit of a task whose reference draws random numbers that its values depend on."""
    return (
        f"random-reference: the reference's `{operation}` draws random numbers its values depend on (two runs on the "
        "same inputs differ), so no kernel's values can match them draw for draw; judge it with --module-mode eval "
        "where that turns the draw off (dropout)"
    )


def disagreement(cases: Sequence[CaseResult]) -> ProfileDisagreement | None:
    """The strict and kernelbench verdicts over every case, when they differ (None when they agree, or
    when some case did not run to a comparison)."""
    if not cases or any(c.error is not None or len(c.passed_under) < 2 for c in cases):
        return None
    strict = all(c.passed_under.get("strict", False) for c in cases)
    kernelbench = all(c.passed_under.get("kernelbench", False) for c in cases)
    if strict == kernelbench:
        return None
    differing = [c for c in cases if c.passed_under.get("strict") != c.passed_under.get("kernelbench")]
    return ProfileDisagreement(
        strict=_word(strict),
        kernelbench=_word(kernelbench),
        max_abs_err=max((c.max_abs_err or 0.0 for c in differing), default=0.0),
        max_rel_err=max((c.max_rel_err or 0.0 for c in differing), default=0.0),
        cases=[c.name for c in differing],
    )


def _word(passed: bool) -> Literal["pass", "fail"]:
    return "pass" if passed else "fail"


def limits(
    result: EvalResult, source: str, input_dtypes: Collection[str] = (), random_draw: str | None = None
) -> list[str]:
    """The limits that account for `result`'s failure (empty unless it is a `fail`): `source` is the candidate's,
    `input_dtypes` the dtypes of the task's input tensors, `random_draw` the random operation the reference's values
    depend on (`WorkerResult.reference_random`)."""
    if result.status != "fail" or any(c.error is not None for c in result.cases):
        return []
    found = [random_reference(random_draw)] if random_draw else []
    dots = _dots(source)
    if not dots:
        return found
    cpu = result.device == "cpu"
    outputs = {o.dtype for c in result.cases for o in c.outputs}
    if cpu and ("bfloat16" in source or "bfloat16" in {*input_dtypes, *outputs}):
        found.append(BF16_DOT)
    if (
        not cpu
        and any(_tf32(call) for call in dots)
        and all(c.passed_under.get("kernelbench", c.passed) for c in result.cases)
        and outputs <= {"float32"}
    ):
        found.append(TF32_DOT)
    return found


def _dots(source: str) -> list[ast.Call]:
    """The `tl.dot` calls inside the candidate's Triton kernels."""
    parsed = ParsedSource.parse(source)
    if parsed is None:
        return []
    return [
        node
        for node in parsed.kernel_nodes()
        if isinstance(node, ast.Call) and parsed.path_of(node.func) == "triton.language.dot"
    ]


def _tf32(call: ast.Call) -> bool:
    """Whether a `tl.dot` may run in TF32: the default precision, `allow_tf32=True`, `input_precision='tf32'`."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    precision = keywords.get("input_precision")
    if precision is not None:
        return isinstance(precision, ast.Constant) and precision.value in _TF32_PRECISIONS
    allow = keywords.get("allow_tf32")
    return not (isinstance(allow, ast.Constant) and allow.value is False)


def unlaunched(source: str, cases: Sequence[CaseResult]) -> list[tuple[str, int]]:
    """The candidate's kernels that host code which ran names on a branch no case took (`if M * N <= 65536:
    small[...] else: large[...]`, `launch = small if n <= T else large`, or `_large_path(x)` beside `_small_path(x)`).
    A function ran where it names a kernel launched on some case, or calls one that ran; the code it calls, directly
    or not, is reachable; a kernel named there that no case launched is reported, as (name, the line it is first named
    on). Only cases that ran to the end count; empty where none reports what it launched (the worker's observations
    come with integrity checks)."""
    ran_cases = [c for c in cases if c.launched and c.error is None]  # a forward cut short says nothing of its branches
    parsed = ParsedSource.parse(source) if ran_cases else None
    if parsed is None:
        return []
    launched = {name for c in ran_cases for name in c.launched}
    calls, named = _host_calls(parsed)
    ran = {function for function, kernels in named.items() if any(k in launched for k, _ in kernels)}
    ran = _closure(ran, {callee: {f for f, callees in calls.items() if callee in callees} for callee in calls})
    found: dict[str, int] = {}
    for function in sorted(_closure(ran, calls)):
        for kernel, line in named.get(function, []):
            if kernel not in launched:
                found[kernel] = min(line, found.get(kernel, line))
    return sorted(found.items(), key=lambda item: item[1])


def unlaunched_line(unlaunched: Sequence[str]) -> str:
    """What a verdict says of the kernels no case launched (`EvalResult.unlaunched`), in the readable output and in
    triage's notes."""
    return (
        f"unchecked: {', '.join(unlaunched)} never ran on any case (the host launches it on a branch none took), "
        "so its values are not judged"
    )


_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def sized_branch(source: str) -> bool:
    """Whether the candidate's host code branches on a size: an `if` (or a conditional expression) whose test
    orders two values, compares with an integer above 1 or reads a shape (`n <= SMALL`, `x.numel() > 65536`,
    `K == 64`, `x.shape[1] >= 2048`). A branch on a dtype or a flag is not one: no larger case would take it."""
    parsed = ParsedSource.parse(source)
    if parsed is None:
        return False
    inside = {id(node) for node in parsed.kernel_nodes()}
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.If | ast.IfExp) and id(node) not in inside:
            for part in ast.walk(node.test):
                big = isinstance(part, ast.Constant) and type(part.value) is int and part.value > 1
                shaped = isinstance(part, ast.Attribute) and part.attr in ("shape", "numel", "size")
                ordered = isinstance(part, ast.Compare) and any(isinstance(op, _ORDERINGS) for op in part.ops)
                if big or shaped or ordered:
                    return True
    return False


def _host_calls(parsed: ParsedSource) -> tuple[dict[str, set[str]], dict[str, list[tuple[str, int]]]]:
    """Per host function of the file (not a kernel), by name: the file's host functions it calls (by name, or as a
    method: `self._launch(x)`), and the kernels it names, with their lines (a launch, or a kernel bound to a name and
    launched through it)."""
    kernels = {f.name for f in ast.walk(parsed.tree) if isinstance(f, ast.FunctionDef) and parsed.is_kernel(f)}
    functions = [f for f in ast.walk(parsed.tree) if isinstance(f, ast.FunctionDef) and not parsed.is_kernel(f)]
    names = {f.name for f in functions}
    calls: dict[str, set[str]] = {name: set() for name in names}
    named: dict[str, list[tuple[str, int]]] = {name: [] for name in names}
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Call):
                callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if callee in names and callee != function.name:
                    calls[function.name].add(callee)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in kernels:
                named[function.name].append((node.id, node.lineno))
    return calls, named


def _closure(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    """`start` and every name its edges lead to, directly or not."""
    seen, frontier = set(start), list(start)
    while frontier:
        for nxt in edges.get(frontier.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return seen


def config_notes(runs: Sequence[AutotuneRun], trial_passed: Sequence[bool]) -> list[str]:
    """On the CPU interpreter each trial runs the next config of an autotuned kernel: where one config's trials are
    all right and another's are wrong, the kernel (or its grid) depends on a meta-parameter its configs vary. A GPU's
    tuner picks a config by speed, so a pipeline may never have run the wrong one: it is a bug all the same."""
    notes: list[str] = []
    for kernel in dict.fromkeys(run.kernel for run in runs):
        mine = [r for r in runs if r.kernel == kernel and r.trials]
        right = [r for r in mine if all(trial_passed[t] for t in r.trials if t < len(trial_passed))]
        wrong = [r for r in mine if not any(trial_passed[t] for t in r.trials if t < len(trial_passed))]
        if right and wrong:
            notes.append(
                f"autotune {kernel}: wrong under config "
                + ", ".join(f"#{r.index} ({r.config})" for r in wrong)
                + ", right under "
                + ", ".join(f"#{r.index} ({r.config})" for r in right)
                + ": it depends on a meta-parameter its configs vary (a GPU's tuner may pick either)"
            )
    return notes
