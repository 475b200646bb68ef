"""Generated-kernel habits on the CPU interpreter: autotune, heuristics, libdevice, device asserts,
and GPU-only calls that must become a clear `interpreter` error (kope.evaluate.inside.interpreter)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import FIXTURES, SCALE_TASK

from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.inside.interpreter import HINT, HOST_CALL, _function
from kope.render import autotune_summary

KERNELS = FIXTURES / "interpreter"
THREE_TRIALS = EvalOptions(trials=3, timeout_s=30, memory_mb=2048)


def test_autotuned_kernel_runs_a_config_per_trial_and_says_which(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "autotune_pruned.py", options=THREE_TRIALS, which=["N=257"])
    assert result.status == "pass", result.error
    (case,) = result.cases
    ran = {run.index: run for run in case.autotune}
    assert set(ran) == {0, 1}, "the pruned config (BLOCK_SIZE=4096) never runs; the other two both do"
    assert ran[0].config.startswith("BLOCK_SIZE=128") and ran[0].trials == [0, 2] and ran[0].configs == 2
    assert ran[1].config.startswith("BLOCK_SIZE=256") and ran[1].trials == [1]
    assert "2 of 2 configs ran" in autotune_summary(result)
    assert '"autotune"' in result.model_dump_json()


def test_heuristics_libdevice_and_a_passing_device_assert_run(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "heuristics_libdevice.py", options=THREE_TRIALS, which=["N=257"])
    assert result.status == "pass", result.error
    assert result.cases[0].autotune == []


@pytest.mark.parametrize(
    ("fixture", "needle", "options"),
    [
        ("do_bench_in_forward.py", "triton.testing.do_bench", THREE_TRIALS),
        ("cuda_query_in_forward.py", "CUDA", EvalOptions(trials=3, timeout_s=30, memory_mb=2048, cuda_emulation=False)),
    ],
)
def test_gpu_only_calls_are_an_interpreter_error_with_a_hint(
    evaluator: Evaluator, fixture: str, needle: str, options: EvalOptions
) -> None:
    """Timing in forward needs a GPU; a device query does too once CUDA emulation is off (tests/evaluate/inside/
    test_cuda.py runs it with emulation)."""
    result = evaluator.evaluate(SCALE_TASK, KERNELS / fixture, options=options, which=["N=257"])
    assert result.status == "error"
    error = result.cases[0].error
    assert error is not None and error.kind == "interpreter" and needle in error.message
    assert error.hint == HINT and "--device cuda" in error.hint


def test_a_failing_device_assert_is_a_runtime_error_not_a_pass(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "failing_device_assert.py", options=THREE_TRIALS, which=["N=257"])
    error = result.cases[0].error
    assert result.status == "error" and error is not None and error.kind == "runtime"
    assert "inputs must be non-negative" in error.message


def test_libdevice_symbols_map_to_cpu_functions() -> None:
    names = {s: _function(s) for s in ("__nv_tanhf", "__nv_fast_expf", "__nv_fdiv_rn", "__nv_powif", "__ocml_erf_f32")}
    assert all(f is not None for f in names.values()), names
    assert _function("__nv_no_such_thing") is None


def test_a_kernel_wrong_under_one_autotune_config_fails_and_is_not_called_caching(evaluator: Evaluator) -> None:
    """Trial 0 runs the first config (wrong), trial 1 the second (right), and the caching probe reruns the first
    config on trial 1's values: its mismatch is the first config's bug again, not a stale output."""
    result = evaluator.evaluate(
        SCALE_TASK, KERNELS / "autotune_wrong_first_config.py", options=THREE_TRIALS, which=["N=1000"]
    )
    assert result.status == "fail", (result.status, result.error, result.integrity)
    assert not [f for f in result.integrity.findings if f.rule == "output-caching"]
    (case,) = result.cases
    assert not case.passed and case.mismatch_count > 0


def test_a_load_mask_held_as_integers_is_traced_as_a_truth_mask(evaluator: Evaluator) -> None:
    """The interpreter loads where an integer mask is nonzero; the provenance tracer read such a mask as indices
    (an IndexError in kope's own hook that broke an honest kernel)."""
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "int_mask.py", options=EvalOptions(trials=1), which=["N=257"])
    assert result.status == "pass", [c.error for c in result.cases]
    assert result.integrity.verdict == "clean"


def test_int32_arithmetic_that_wraps_as_on_a_gpu_is_not_an_error(evaluator: Evaluator) -> None:
    """A hash that overflows int32 is honest (a GPU wraps it, and checks no overflow without `debug`); the
    interpreter's overflow sanitiser made it an assertion error (and tripled the time of index-heavy kernels)."""
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "wrapping_hash.py", options=THREE_TRIALS, which=["N=257"])
    assert result.status == "pass", result.error or result.cases[0].error
    checked = dataclasses.replace(THREE_TRIALS, overflow_check=True)  # asked for: the wrap is the kernel's error
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "wrapping_hash.py", options=checked, which=["N=257"])
    error = result.cases[0].error
    assert result.status == "error" and error is not None and error.kind == "runtime"
    assert "int32 overflow" in error.message


def test_a_device_function_called_on_the_host_fails_as_on_a_gpu(evaluator: Evaluator, tmp_path: Path) -> None:
    """`tl.cdiv` in host code: a GPU refuses it ("Cannot call @triton.jit'd outside of the scope of a kernel"); the
    interpreter would run it and leave its patches of the language behind, which then broke the next launch's GPU
    lowering with an interpreter error. The host form runs."""
    good = (FIXTURES / "good" / "scale.py").read_text()
    assert "triton.cdiv(" in good
    candidate = tmp_path / "host_cdiv.py"
    candidate.write_text(good.replace("triton.cdiv(", "tl.cdiv("))
    refused = evaluator.evaluate(SCALE_TASK, candidate, options=THREE_TRIALS)
    assert refused.status == "error" and refused.error is not None
    assert HOST_CALL in refused.error.message and "InterpreterBuilder" not in refused.error.message
    assert evaluator.evaluate(SCALE_TASK, FIXTURES / "good" / "scale.py", options=THREE_TRIALS).status == "pass"


def test_an_autotuned_kernel_that_adds_into_its_output_counts_the_benchmarks_runs(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """On a GPU the first call with a new tuning key benchmarks the configs, running the kernel before the run
    that counts: an atomic add into a zeroed output without `reset_to_zero` returns a multiple of the sum. Here the
    first call runs the chosen config once as the benchmark does: wrong without `reset_to_zero`, right with it."""
    source = (KERNELS / "autotune_atomic.py").read_text()
    result = evaluator.evaluate(SCALE_TASK, KERNELS / "autotune_atomic.py", options=THREE_TRIALS, which=["N=1000"])
    assert result.status == "fail", (result.status, result.error)
    (case,) = result.cases
    assert case.outputs and case.outputs[0].mismatch_count > 0
    reset = tmp_path / "autotune_atomic_reset.py"
    reset.write_text(source.replace('key=["n_elements"],\n)', 'key=["n_elements"],\n    reset_to_zero=["out_ptr"],\n)'))
    assert "reset_to_zero" in reset.read_text()
    fixed = evaluator.evaluate(SCALE_TASK, reset, options=THREE_TRIALS, which=["N=1000"])
    assert fixed.status == "pass", (fixed.status, fixed.error)
