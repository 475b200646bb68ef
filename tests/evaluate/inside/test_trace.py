"""Tracing a kernel's locals at a line, for one program."""

from __future__ import annotations

from conftest import SCALE_GOOD, SCALE_TASK

from kope.evaluate import EvalOptions, Evaluator
from kope.protocol import TraceSpec


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SCALE_GOOD.read_text().splitlines(), start=1) if text in line)


def test_trace_shows_locals_of_the_chosen_program(evaluator: Evaluator) -> None:
    line = line_of("mask = offsets < n")
    spec = TraceSpec(kernel="_scale_kernel", line=line + 1, pid=[3])
    result = evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=EvalOptions(trials=1, trace=spec), which="visible")
    (hit,) = result.cases[0].trace or []
    assert hit.pid == [3, 0, 0]
    assert "min 768, max 1023" in hit.variables["offsets"]
    assert hit.variables["mask"].startswith("mask [256]: 232 of 256 lanes on")
    assert "1000" in hit.variables["n"]


def test_trace_of_an_unreached_line_is_empty(evaluator: Evaluator) -> None:
    spec = TraceSpec(kernel="_scale_kernel", line=line_of("mask = offsets < n"), pid=[99])
    result = evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=EvalOptions(trials=1, trace=spec), which="visible")
    assert result.cases[0].trace == []
