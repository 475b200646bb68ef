"""End to end: real tasks, real Triton kernels in the interpreter, real sandboxes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import HOSTILE, SCALE_GOOD, SCALE_TASK

from kope.cases.task import load_task
from kope.errors import CandidateFileError, CaseError, ReferenceError_
from kope.evaluate import EvalOptions, Evaluator

HOSTILE_EXPECTED = {
    "infinite_loop.py": ("error", "timeout"),
    "segfault.py": ("error", "crash"),
    "os_exit.py": ("error", "exit"),
    "system_exit.py": ("error", "exit"),
    "memory_bomb.py": ("error", "memory"),
    "torch_oom.py": ("error", "memory"),
    "syntax_error.py": ("error", "syntax"),
    "import_error.py": ("error", "import"),
    "no_model.py": ("error", "load"),
    "bad_init.py": ("error", "load"),
    "runtime_error.py": ("error", "runtime"),
    "wrong_shape.py": ("error", "shape"),
    "nan_output.py": ("fail", None),
    "unwritten_tail.py": ("fail", None),
    "output_flood.py": ("pass", None),
    "child_processes.py": ("reject", None),
}


@pytest.mark.smoke
def test_good_kernel_passes_every_case(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(SCALE_TASK, SCALE_GOOD)
    assert result.status == "pass" and result.exit_code == 0
    assert [c.name for c in result.cases] == ["N=1000", "N=1", "N=257"]
    assert [c.visible for c in result.cases] == [True, False, False]
    assert all(c.trials == 3 and c.max_abs_err == 0.0 for c in result.cases)
    assert result.cases_run == "all"
    data = json.loads(result.model_dump_json())
    assert {"status", "error", "cases", "integrity", "timing"} <= set(data)
    assert {"name", "passed", "max_abs_err", "max_rel_err", "mismatch_fraction"} <= set(data["cases"][0])


def test_visible_subset_and_named_cases(evaluator: Evaluator, fast: EvalOptions) -> None:
    visible = evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=fast, which="visible")
    assert [c.name for c in visible.cases] == ["N=1000"] and visible.cases_run == "visible"
    named = evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=fast, which=["N=257"])
    assert [c.name for c in named.cases] == ["N=257"] and named.cases_run == "selected"
    with pytest.raises(CaseError, match="no case named"):
        evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=fast, which=["N=5"])


@pytest.mark.parametrize("fixture", sorted(HOSTILE_EXPECTED))
def test_hostile_candidates_get_the_right_outcome(evaluator: Evaluator, fixture: str) -> None:
    status, kind = HOSTILE_EXPECTED[fixture]
    options = EvalOptions(trials=1, timeout_s=3 if fixture == "infinite_loop.py" else 30, memory_mb=1024)
    result = evaluator.evaluate(SCALE_TASK, HOSTILE / fixture, options=options)
    assert result.status == status, result.error
    assert (result.error.kind if result.error else None) == kind
    after = evaluator.evaluate(SCALE_TASK, SCALE_GOOD, options=options, which="visible")
    assert after.status == "pass", "the next evaluation must work"


def test_errors_carry_useful_messages(evaluator: Evaluator, fast: EvalOptions) -> None:
    runtime = evaluator.evaluate(SCALE_TASK, HOSTILE / "runtime_error.py", options=fast)
    assert runtime.error is not None and runtime.error.traceback is not None
    assert str(HOSTILE / "runtime_error.py") in runtime.error.traceback, "tracebacks name the user's file"
    assert "did not expect" in runtime.error.message
    syntax = evaluator.evaluate(SCALE_TASK, HOSTILE / "syntax_error.py", options=fast)
    assert syntax.error is not None and syntax.error.message.startswith("line 5")
    assert all(c.error is not None and "not run" in c.error.message for c in syntax.cases[1:])
    crash = evaluator.evaluate(SCALE_TASK, HOSTILE / "segfault.py", options=fast)
    assert crash.error is not None and "SIGSEGV" in crash.error.message


def test_unwritten_output_elements_are_caught(evaluator: Evaluator, fast: EvalOptions) -> None:
    result = evaluator.evaluate(SCALE_TASK, HOSTILE / "unwritten_tail.py", options=fast)
    first = result.cases[0]
    assert not first.passed and first.mismatch_count == 1000 - 768
    assert first.outputs[0].first_mismatch == [768] and first.outputs[0].nan_mismatch == 1000 - 768


def test_output_flood_is_captured_within_bounds(evaluator: Evaluator, fast: EvalOptions) -> None:
    result = evaluator.evaluate(SCALE_TASK, HOSTILE / "output_flood.py", options=fast, which="visible")
    assert result.status == "pass"
    assert "flood" in result.cases[0].stdout and len(result.cases[0].stdout) < 4000


def test_no_child_process_survives(evaluator: Evaluator, fast: EvalOptions) -> None:
    result = evaluator.evaluate(SCALE_TASK, HOSTILE / "child_processes.py", options=fast)
    assert all(case.passed for case in result.cases), "numerically right..."
    assert result.status == "reject", "...but it starts processes"
    assert {"threads-processes"} == {f.rule for f in result.integrity.findings if f.severity == "reject"}
    marker = b"kope-hostile-orphan-marker"
    survivors = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker in handle.read():
                        survivors.append(entry)
            except OSError:
                continue
    assert survivors == []


@pytest.mark.slow
def test_secrets_in_the_parent_environment_are_not_visible(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fast: EvalOptions
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-kope-fake-key-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    with Evaluator(cache_dir=tmp_path) as fresh:
        result = fresh.evaluate(SCALE_TASK, HOSTILE / "env_reader.py", options=fast)
    assert result.status == "pass", "the candidate computes a wrong result when it finds a secret"
    assert "environment:" in result.cases[0].stdout
    assert "sk-" not in result.cases[0].stdout


@pytest.mark.slow
def test_reference_outputs_are_cached(tmp_path: Path, fast: EvalOptions) -> None:
    with Evaluator(cache_dir=tmp_path / "cache") as fresh:
        fresh.evaluate(SCALE_TASK, SCALE_GOOD, options=fast)
        entries = sorted(p.name for p in (tmp_path / "cache").iterdir())
        stamps = {p: (tmp_path / "cache" / p / "result.json").stat().st_mtime_ns for p in entries}
        assert len(entries) == 3
        fresh.evaluate(SCALE_TASK, HOSTILE / "nan_output.py", options=fast)
        assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == entries
        assert stamps == {p: (tmp_path / "cache" / p / "result.json").stat().st_mtime_ns for p in entries}
        fresh.evaluate(SCALE_TASK, SCALE_GOOD, options=EvalOptions(trials=1, seed=7))
        assert len(list((tmp_path / "cache").iterdir())) == 6, "another seed is another entry"


def test_seeded_runs_are_reproducible(tmp_path: Path, evaluator: Evaluator) -> None:
    candidate = tmp_path / "scale_wrong.py"
    candidate.write_text(SCALE_GOOD.read_text().replace("* 2.0", "* 2.001"))
    first = evaluator.evaluate(SCALE_TASK, candidate, options=EvalOptions(trials=2, seed=1))
    again = evaluator.evaluate(SCALE_TASK, candidate, options=EvalOptions(trials=2, seed=1))
    other = evaluator.evaluate(SCALE_TASK, candidate, options=EvalOptions(trials=2, seed=2))
    assert first.status == "fail"
    assert [c.max_abs_err for c in first.cases] == [c.max_abs_err for c in again.cases]
    assert [c.max_abs_err for c in first.cases] != [c.max_abs_err for c in other.cases]


def test_set_overrides_apply_to_reference_and_candidate(evaluator: Evaluator, fast: EvalOptions) -> None:
    task = load_task(SCALE_TASK)
    cases = evaluator.cases(task, set_overrides={"N": 33})
    assert [c.name for c in cases] == ["N=33"]
    result = evaluator.evaluate(task, SCALE_GOOD, options=fast, cases=cases)
    assert result.status == "pass" and result.cases[0].numel == 33


def test_task_without_cases_and_with_tolerances(tmp_path: Path, evaluator: Evaluator, fast: EvalOptions) -> None:
    source = SCALE_TASK.read_text().replace('def get_cases():\n    return [{"N": 1000}, {"N": 1}, {"N": 257}]\n', "")
    loose = tmp_path / "loose.py"
    loose.write_text(source + '\nTOLERANCES = {"float32": {"atol": 0.01, "rtol": 0.0}}\n')
    candidate = tmp_path / "close.py"
    candidate.write_text(SCALE_GOOD.read_text().replace("* 2.0", "* 2.0 + 0.001"))
    result = evaluator.evaluate(loose, candidate, options=fast)
    assert [c.name for c in result.cases] == ["original", "odd", "prime", "one", "scaled", "shifted"], "derived"
    assert [c.visible for c in result.cases] == [True, False, False, False, False, False]
    assert result.status == "pass" and all(c.max_abs_err > 1e-4 for c in result.cases)
    strict = tmp_path / "strict.py"
    strict.write_text(source)
    assert evaluator.evaluate(strict, candidate, options=fast).status == "fail"


def test_reference_failure_is_a_task_error(tmp_path: Path, evaluator: Evaluator, fast: EvalOptions) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(SCALE_TASK.read_text().replace("return x * 2.0", "raise RuntimeError('reference is broken')"))
    with pytest.raises(ReferenceError_, match="reference is broken"):
        evaluator.evaluate(broken, SCALE_GOOD, options=fast)


def test_missing_candidate_file(evaluator: Evaluator, tmp_path: Path) -> None:
    with pytest.raises(CandidateFileError, match="not found"):
        evaluator.evaluate(SCALE_TASK, tmp_path / "absent.py")


@pytest.mark.slow
def test_spawn_runner_gives_the_same_result(tmp_path: Path, fast: EvalOptions) -> None:
    with Evaluator(runner="spawn", cache_dir=tmp_path) as spawned:
        result = spawned.evaluate(SCALE_TASK, SCALE_GOOD, options=fast, which="visible")
    assert result.status == "pass"


_SCALE_KERNEL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)


def scale(x):
    y = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
    return y
"""


def test_a_wrong_result_on_the_caching_probe_fails_the_case_without_a_caching_verdict(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Right on both trials, wrong (but not stale) when called again on the first trial's storage: a wrong
    result, which fails the case; only a stale one is output caching."""
    candidate = tmp_path / "second_call_off.py"
    candidate.write_text(
        _SCALE_KERNEL
        + """

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = scale(x)
        return y + 1.0 if self.calls == 2 else y
"""
    )
    result = evaluator.evaluate(SCALE_TASK, candidate, options=EvalOptions(trials=2), which=["N=257"])
    assert result.status == "fail", (result.status, result.error)
    assert not [f for f in result.integrity.findings if f.rule == "output-caching"]
    assert result.cases[0].trials == 2 and result.cases[0].mismatch_count == 257


def test_a_cached_output_nudged_off_the_old_result_still_cannot_pass(evaluator: Evaluator, tmp_path: Path) -> None:
    """An attacker who read the staleness check returns its cached output shifted: not stale, so not called
    caching, but wrong on the probe (trial 1, run in trial 0's storage), so the case fails; the shift is
    PyTorch computing on a kernel's output during a watched forward, which the verdict may reject too."""
    candidate = tmp_path / "nudged_cache.py"
    candidate.write_text(
        _SCALE_KERNEL
        + """

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.memo = {}

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        if key in self.memo:
            return self.memo[key] + 1e-3
        self.memo[key] = scale(x)
        return self.memo[key]
"""
    )
    result = evaluator.evaluate(SCALE_TASK, candidate, options=EvalOptions(trials=2), which=["N=257"])
    assert result.status in ("fail", "reject"), (result.status, result.error)
    assert result.error is None and not result.cases[0].passed
    assert not [f for f in result.integrity.findings if f.rule == "output-caching" and f.severity == "reject"]


def test_an_error_inside_a_kernel_names_the_kernels_line(
    evaluator: Evaluator, fast: EvalOptions, tmp_path: Path
) -> None:
    """The interpreter re-raises a kernel's error from the launch: the message names the kernel's own line."""
    source = SCALE_GOOD.read_text()
    lines = source.splitlines()
    at = next(i for i, line in enumerate(lines) if "tl.store(" in line)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, f"{indent}first = offsets[0]")
    broken = tmp_path / "scalar_index.py"
    broken.write_text("\n".join(lines) + "\n")
    result = evaluator.evaluate(SCALE_TASK, broken, options=fast)
    assert result.error is not None and result.error.kind == "runtime"
    assert result.error.message.endswith(f"(candidate line {at + 1}: first = offsets[0])"), result.error.message
