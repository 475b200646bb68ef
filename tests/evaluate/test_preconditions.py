"""A candidate's own precondition (kope.evaluate.preconditions): a case of other sizes that the candidate refuses with
an `assert` or a `raise` of its host code is not judged; everything else about the verdict stands. Real tasks with
derived cases, real Triton kernels."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK
from rich.console import Console

from kope.cases import load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.assembly import assemble
from kope.protocol.results import CaseResult, EvalError, Integrity
from kope.render import eval_summary

OPTIONS = EvalOptions(trials=1, timeout_s=60, memory_mb=2048)

TASK = """
import torch
import torch.nn as nn

M = {m}
N = {n}


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
"""

KERNEL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


class Unsupported(Exception):
    pass


@triton.jit
def relu_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * {scale}, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
{guard}
        out = torch.empty_like(x)
        n = x.numel()
        relu_scale_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        return out
"""

BY_FOUR = '        assert cols % 4 == 0, "the row is read four floats at a time"'


def _task(tmp_path: Path, m: int = 16, n: int = 64) -> Path:
    path = tmp_path / "level1" / "1_ReluScale.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TASK.format(m=m, n=n))
    return path


def _kernel(tmp_path: Path, guard: str, scale: str = "2.0", name: str = "candidate.py") -> Path:
    path = tmp_path / name
    path.write_text(KERNEL.format(guard=guard, scale=scale))
    return path


def test_an_honest_kernel_that_refuses_sizes_it_was_not_written_for_passes_on_those_it_accepts(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    result = evaluator.evaluate(_task(tmp_path), _kernel(tmp_path, BY_FOUR), options=OPTIONS)
    assert result.status == "pass", result.error
    refused = [c for c in result.cases if c.outside is not None]
    judged = [c for c in result.cases if c.outside is None]
    assert refused and len(judged) >= 2 and all(c.passed for c in judged)
    assert all(c.overrides["N"] % 4 for c in refused) and not any(c.overrides.get("N", 64) % 4 for c in judged)
    for case in refused:
        assert case.error is not None and case.error.kind == "unsupported" and not case.shows_bug
        assert "line 23: assert cols % 4 == 0" in (case.outside or "")
    console = Console(width=200, record=True)
    console.print(eval_summary(result))
    text = console.export_text()
    assert f"{len(judged)}/{len(judged)} cases pass" in text and "not judged" in text
    assert not [f for f in result.integrity.findings if f.rule == "shape-specialization"]


def test_wrong_values_on_the_cases_it_accepts_are_still_a_near_miss(evaluator: Evaluator, tmp_path: Path) -> None:
    result = evaluator.evaluate(_task(tmp_path), _kernel(tmp_path, BY_FOUR, scale="3.0"), options=OPTIONS)
    assert result.status == "fail" and result.error is None
    assert any(c.outside is not None for c in result.cases)


def test_a_kernel_that_refuses_the_first_case_refuses_the_task(evaluator: Evaluator, tmp_path: Path) -> None:
    """The task's own sizes are over the CPU's budget: the first case is their shrunk stand-in, which a kernel
    written for the task must accept (an `assert D % 2 == 0` where the task's own D is odd is broken, not unsupported).
    A kernel that accepts only the task's exact shape is broken here as it was before preconditions were read."""
    task = _task(tmp_path, m=1024, n=1024)
    guard = "        assert x.shape == (1024, 1024)"
    result = evaluator.evaluate(task, _kernel(tmp_path, guard), options=OPTIONS)
    assert result.status == "error" and result.error is not None and result.error.kind == "runtime"
    assert result.cases[0].outside is None and result.cases[0].error is not None


def test_a_refusal_that_depends_on_the_values_is_not_a_precondition_on_sizes(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """The cases of other input values share the first case's sizes: refusing them and no other is about values."""
    task = _task(tmp_path, m=1024, n=1024)
    guard = "        assert float(x.abs().max()) < 10.0  # the scaled case multiplies by 4"
    result = evaluator.evaluate(task, _kernel(tmp_path, guard), options=OPTIONS)
    assert result.status == "error" and result.error is not None and result.error.kind == "unsupported"
    assert "other input values" in result.error.message
    assert [c.name for c in result.cases if c.outside] == ["scaled"]


@pytest.mark.parametrize(
    "guard",
    [
        "        x.view(rows, cols // 4, 4)",  # PyTorch raises, on the candidate's line: not a statement of its own
        "        if cols % 4:\n            raise Unsupported(cols)",  # its own class: not a builtin error
        "        if cols % 4:\n            raise KeyError(cols)",
    ],
    ids=["pytorch-raises", "own-exception", "other-builtin"],
)
def test_other_errors_on_other_sizes_are_the_kernels_own(evaluator: Evaluator, tmp_path: Path, guard: str) -> None:
    result = evaluator.evaluate(_task(tmp_path), _kernel(tmp_path, guard), options=OPTIONS)
    assert result.status == "error" and result.error is not None and result.error.kind == "runtime"
    assert not any(c.outside for c in result.cases)


def test_a_raise_of_a_builtin_error_is_a_precondition_too(evaluator: Evaluator, tmp_path: Path) -> None:
    guard = '        if cols % 4 != 0:\n            raise NotImplementedError(f"cols={cols} is not a multiple of 4")'
    result = evaluator.evaluate(_task(tmp_path), _kernel(tmp_path, guard), options=OPTIONS)
    assert result.status == "pass", result.error
    assert any("raise NotImplementedError" in (c.outside or "") for c in result.cases)


def test_the_cases_a_task_lists_are_requirements(evaluator: Evaluator, tmp_path: Path) -> None:
    """`get_cases()` asks for N = 1 and N = 257: a refusal there is the kernel's failure."""
    guard = "        assert x.numel() % 4 == 0"
    source = SCALE_GOOD.read_text()
    assert "def forward(self, x):\n" in source
    path = tmp_path / "scale.py"
    path.write_text(source.replace("def forward(self, x):\n", "def forward(self, x):\n" + guard + "\n", 1))
    result = evaluator.evaluate(SCALE_TASK, path, options=OPTIONS)
    assert load_task(SCALE_TASK).defines_get_cases
    assert result.status == "error" and result.error is not None and result.error.kind == "runtime"
    assert not any(c.outside for c in result.cases)


def _case(name: str, passed: bool, refused: bool = False, transformed: bool = False) -> CaseResult:
    error = EvalError(kind="unsupported", message="not judged") if refused else None
    inputs = {"scale": 4.0} if transformed else None
    return CaseResult.model_validate(
        {
            "name": name,
            "overrides": {},
            "visible": name == "a",
            "passed": passed,
            "error": error,
            "outside": "line 3: assert N % 4 == 0" if refused else None,
            "inputs": inputs,
        }
    )


def _status(*cases: CaseResult) -> tuple[str, str | None]:
    integrity = Integrity(verdict="clean", checked=True)
    result = assemble(load_task(SCALE_TASK), SCALE_GOOD, EvalOptions(), list(cases), "all", integrity, 0.1)
    return result.status, result.error.kind if result.error else None


def test_the_status_rule_judges_the_cases_the_kernel_accepts() -> None:
    assert _status(_case("a", True), _case("b", False, refused=True)) == ("pass", None)
    assert _status(_case("a", False), _case("b", False, refused=True)) == ("fail", None)
    assert _status(_case("a", False, refused=True), _case("b", False, refused=True)) == ("error", "unsupported")
    refused_values = _case("c", False, refused=True, transformed=True)
    assert _status(_case("a", True), refused_values) == ("error", "unsupported")


MATMUL_TASK = """
import torch
import torch.nn as nn

M = 48
K = 64
N = 40


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
"""

MATMUL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, allow_tf32=False)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc * {scale}, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        BLOCK_K = 32
        if K < BLOCK_K:
            BLOCK_K = triton.next_power_of_2(K)  # the blocks follow a small K down
        grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
        matmul_kernel[grid](a.contiguous(), b.contiguous(), c, M, N, K, BLOCK_M=16, BLOCK_N=16, BLOCK_K=BLOCK_K)
        return c
"""


def test_the_gpu_compilers_minimum_dot_shape_refuses_sizes_as_a_precondition_does(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A matrix product whose K block follows a small K down: at a derived K under 16 the GPU compiler refuses its
    `tl.dot` (the hardware multiplies no smaller blocks), which says nothing of its values. Those cases are not
    judged; the kernel passes on the others, and a wrong product is still a near miss there."""
    task = tmp_path / "level1" / "2_Matmul.py"
    task.parent.mkdir(parents=True, exist_ok=True)
    task.write_text(MATMUL_TASK)
    honest = tmp_path / "matmul.py"
    honest.write_text(MATMUL.format(scale="1.0"))
    result = evaluator.evaluate(task, honest, options=OPTIONS)
    assert result.status == "pass", (result.error, [(c.name, c.overrides, c.error) for c in result.cases])
    refused = [c for c in result.cases if c.outside is not None]
    assert refused and all(c.overrides["K"] < 16 for c in refused)
    assert all("minimum `tl.dot` shape at line 17" in (c.outside or "") for c in refused)
    assert all(c.passed for c in result.cases if c.outside is None)
    wrong = tmp_path / "matmul_twice.py"
    wrong.write_text(MATMUL.format(scale="2.0"))
    failed = evaluator.evaluate(task, wrong, options=OPTIONS)
    assert failed.status == "fail" and any(c.outside is not None for c in failed.cases)


def test_the_compilers_words_raised_from_host_code_are_not_its_refusal(evaluator: Evaluator, tmp_path: Path) -> None:
    """An attacker who read the rule: its own `GpuCompileError`, raised with the compiler's message from host code
    wherever K is not the task's, to leave those cases unjudged. The message points at no `tl.dot` of a kernel, so
    the cases are judged (an error), as any other error of the candidate's."""
    task = tmp_path / "level1" / "2_Matmul.py"
    task.parent.mkdir(parents=True, exist_ok=True)
    task.write_text(MATMUL_TASK)
    forged = (
        MATMUL.format(scale="1.0")
        .replace(
            "        M, K = a.shape\n",
            "        M, K = a.shape\n"
            "        if K != 64:\n"
            "            raise GpuCompileError(\n"
            '                "Triton\'s GPU compiler refuses `matmul_kernel`: "\n'
            '                "Input shapes should have M >= 1, N >= 1 and K >= 16"\n'
            "            )\n",
        )
        .replace("class ModelNew", "class GpuCompileError(RuntimeError):\n    pass\n\n\nclass ModelNew")
    )
    candidate = tmp_path / "forged.py"
    candidate.write_text(forged)
    result = evaluator.evaluate(task, candidate, options=OPTIONS)
    assert result.status == "error" and not any(c.outside for c in result.cases), [
        (c.name, c.outside, c.error) for c in result.cases
    ]
