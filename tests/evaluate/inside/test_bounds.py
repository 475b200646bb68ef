"""The bounds checker finds every out-of-bounds access in fixtures built for it, and none in the suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, SCALE_TASK

from kope.evaluate import EvalOptions, Evaluator
from kope.ops import list_ops

BOUNDS = FIXTURES / "bounds"
CHECK = EvalOptions(trials=1, bounds_check=True, integrity=False)


def marked_line(path: Path) -> tuple[int, str]:
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if "# out of bounds:" in text:
            return number, text.split("# out of bounds:")[1].strip()
    raise AssertionError(f"{path.name} marks no line")


@pytest.mark.parametrize("fixture", sorted(p.name for p in BOUNDS.glob("*.py")))
def test_every_out_of_bounds_access_is_found(evaluator: Evaluator, fixture: str) -> None:
    line, kind = marked_line(BOUNDS / fixture)
    result = evaluator.evaluate(SCALE_TASK, BOUNDS / fixture, options=CHECK)
    assert result.error is None, result.error
    for case in result.cases:
        events = [(e.kernel, e.line, e.kind) for e in case.bounds]
        assert events == [("_scale_kernel", line, kind)], (case.name, events)
        (event,) = case.bounds
        assert event.lanes >= 1 and event.elements_out >= 1 and event.nearest


def test_report_says_where_and_how_far(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, BOUNDS / "load_tail.py", options=CHECK, which="visible")
    (event,) = result.cases[0].bounds
    assert event.pid == [3, 0, 0] and event.lanes == 24 and event.elements_out == 24
    assert event.nearest == "past the end of x_ptr"
    far = evaluator.evaluate(SCALE_TASK, BOUNDS / "far_pointer.py", options=CHECK, which="visible")
    # the distance is to the nearest tensor of the launch: where the allocator put y decides it
    assert far.cases[0].bounds[0].elements_out > 100_000
    before = evaluator.evaluate(SCALE_TASK, BOUNDS / "negative_offset.py", options=CHECK, which="visible")
    (event,) = before.cases[0].bounds
    assert event.pid == [0, 0, 0] and event.lanes == 1 and event.nearest == "before the start of x_ptr"


def test_masked_off_lanes_keep_the_kernel_alive(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, BOUNDS / "far_pointer.py", options=CHECK)
    assert result.error is None and result.status == "fail"


def test_the_suite_makes_no_out_of_bounds_access(evaluator: Evaluator) -> None:
    for op in list_ops():
        result = evaluator.evaluate(op.task_path, op.kernel_path, options=CHECK)
        assert result.status == "pass", op.name
        assert [e for c in result.cases for e in c.bounds] == [], op.name


@pytest.mark.parametrize("fixture", ["scale_2d.py", "scale_descriptor.py"])
def test_block_pointers_with_boundary_checks_pass(evaluator: Evaluator, fixture: str) -> None:
    """A block pointer's `boundary_check` mask (and a tensor descriptor's) reaches the checker as a bare array, not
    a handle, and a descriptor's load passes keywords: honest kernels on them are judged on their values (they were
    an `error`), with no access out of bounds."""
    result = evaluator.evaluate(SCALE_TASK, FIXTURES / "blockptr" / fixture, options=CHECK)
    assert result.error is None, result.error
    assert result.status == "pass"
    assert [e for c in result.cases for e in c.bounds] == []
    traced = evaluator.evaluate(SCALE_TASK, FIXTURES / "blockptr" / fixture)
    assert traced.status == "pass", traced.error
