"""Triton's GPU compiler front end on every interpreted launch (kope.evaluate.inside.frontend): what the GPU
refuses is the kernel's error on the CPU too, and what it takes (jitted helpers, Triton's own jitted functions,
constexpr globals, autotune) still runs."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import FIXTURES, SCALE_TASK

from kope.evaluate import EvalOptions, Evaluator

KERNELS = FIXTURES / "interpreter"
OPTIONS = EvalOptions(trials=2, timeout_s=30, memory_mb=2048)


@pytest.mark.parametrize(
    ("fixture", "needle", "code"),
    [
        ("helper_not_jitted.py", "Cannot access global variable doubled", "tl.store(y_ptr + offs, doubled(x)"),
        ("loop_continue.py", "unsupported AST node type: Continue", "continue"),
    ],
)
def test_what_the_gpu_compiler_refuses_is_a_runtime_error(
    evaluator: Evaluator, fixture: str, needle: str, code: str
) -> None:
    """Both give right values under the interpreter: before the front end ran, each was a pass. The message names
    the kernel's line the compiler refuses, not the launch's."""
    result = evaluator.evaluate(SCALE_TASK, KERNELS / fixture, options=OPTIONS, which=["N=257"])
    assert result.status == "error", (result.status, result.error)
    error = result.cases[0].error
    assert error is not None and error.kind == "runtime"
    assert "GPU compiler refuses `twice_kernel`" in error.message and needle in error.message
    lines = (KERNELS / fixture).read_text().splitlines()
    kernel_line = next(i for i, line in enumerate(lines, 1) if line.strip().startswith(code))
    assert f"(candidate line {kernel_line}: {code}" in error.message, error.message


def test_what_the_gpu_compiler_takes_still_passes(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "helper_jitted.py", options=OPTIONS, which=["N=257", "N=1"])
    assert result.status == "pass", result.error


def test_with_the_front_end_off_the_interpreter_alone_judges(evaluator: Evaluator) -> None:
    off = dataclasses.replace(OPTIONS, gpu_frontend=False)
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "loop_continue.py", options=off, which=["N=257"])
    assert result.status == "pass", result.error
