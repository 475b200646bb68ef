"""A kernel the candidate's host launches only past a size no derived case reaches (`if n <= SMALL: small[...]
else: large[...]`) is judged on a larger case that takes its branch (`Evaluator._covering`), and a branch no
affordable case takes is reported unchecked (`EvalResult.unlaunched`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import FIXTURES

from kope.cases.task import load_task
from kope.evaluate import EvalOptions, Evaluator, judging
from kope.protocol.results import CaseResult, EvalError

COVERAGE = FIXTURES / "coverage"
OPTIONS = EvalOptions(trials=1, timeout_s=60, memory_mb=2048, max_elements=4096)


def _candidate(tmp_path: Path, *, wrong_large: bool = False, threshold: int = 6000) -> Path:
    source = (COVERAGE / "two_branches.py").read_text().replace("SMALL = 6000", f"SMALL = {threshold}")
    if wrong_large:
        large = source.index("def _large")
        source = source[:large] + source[large:].replace("tl.maximum(x, 0.0) * 2.0", "tl.abs(x) * 2.0", 1)
    path = tmp_path / "candidate.py"
    path.write_text(source)
    return path


def test_a_wrong_kernel_only_large_sizes_launch_fails_on_a_larger_case(evaluator: Evaluator, tmp_path: Path) -> None:
    result = evaluator.evaluate(COVERAGE / "task.py", _candidate(tmp_path, wrong_large=True), options=OPTIONS)
    assert result.status == "fail"
    (covering,) = [c for c in result.cases if c.name.startswith("coverage")]
    assert not covering.passed and covering.launched == ["_large"] and not covering.visible
    assert all(c.passed and c.launched == ["_small"] for c in result.cases if c is not covering)
    assert result.unlaunched == []


def test_an_honest_kernel_with_two_branches_passes_with_both_checked(evaluator: Evaluator, tmp_path: Path) -> None:
    result = evaluator.evaluate(COVERAGE / "task.py", _candidate(tmp_path), options=OPTIONS)
    assert result.status == "pass"
    assert {name for c in result.cases for name in c.launched} == {"_small", "_large"}
    assert result.unlaunched == []


def test_a_branch_no_affordable_case_takes_is_reported_unchecked(evaluator: Evaluator, tmp_path: Path) -> None:
    """Past 8 x the derived cases' budget the branch stays untaken: the verdict stands on what ran, and says which
    kernel it never saw."""
    candidate = _candidate(tmp_path, wrong_large=True, threshold=4096 * 8)
    result = evaluator.evaluate(COVERAGE / "task.py", candidate, options=OPTIONS)
    assert result.status == "pass"
    assert result.unlaunched == ["_large (line 34)"]
    assert judging.unlaunched_line(result.unlaunched).startswith("unchecked: _large (line 34) never ran")
    assert not [c for c in result.cases if c.name.startswith("coverage")]


def _ran(*kernels: str) -> CaseResult:
    return CaseResult(name="base", overrides={}, visible=True, passed=True, launched=list(kernels))


def test_a_branch_through_helper_functions_is_found_and_dead_code_is_not() -> None:
    """`forward` calls `_small_path` or `_large_path`, each launching its own kernel: `_small_path` ran, so its caller
    did, and what the caller reaches is checked; `_unused`, which nothing that ran calls, is not."""
    source = (COVERAGE / "two_branches.py").read_text()
    source = source.replace(
        "        if n <= SMALL:\n            _small[grid](x, out, n, BLOCK=1024)\n"
        "        else:\n            _large[grid](x, out, n, BLOCK=1024)\n",
        "        if n <= SMALL:\n            _small_path(x, out, n, grid)\n"
        "        else:\n            self._large_path(x, out, n)\n",
    ).replace(
        "class ModelNew(nn.Module):",
        "def _small_path(x, out, n, grid):\n    _small[grid](x, out, n, BLOCK=1024)\n\n\n"
        "def _unused(x, out, n):\n    _large[(1,)](x, out, n, BLOCK=1024)\n\n\n"
        "class ModelNew(nn.Module):\n    def _large_path(self, x, out, n):\n"
        "        _large[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)\n",
    )
    assert judging.unlaunched(source, [_ran("_small")]) == [
        ("_large", source.splitlines().index("        _large[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)") + 1)
    ]
    assert judging.unlaunched(source, [_ran("_small"), _ran("_large")]) == []
    dead = source.replace("            self._large_path(x, out, n)\n", "            pass\n")
    assert judging.unlaunched(dead, [_ran("_small")]) == []
    assert judging.unlaunched(source, [_ran()]) == []
    cut = _ran("_small").model_copy(update={"error": EvalError(kind="runtime", message="raised after _small")})
    assert judging.unlaunched(source, [cut]) == [], "a forward that raised may not have reached its other launch"


def test_only_a_branch_on_a_size_is_worth_a_larger_case() -> None:
    source = (COVERAGE / "two_branches.py").read_text()
    assert judging.sized_branch(source)
    assert judging.sized_branch(source.replace("if n <= SMALL:", "if x.shape[0] < limit:"))
    assert not judging.sized_branch(source.replace("if n <= SMALL:", "if x.dtype == torch.float16:"))


def test_the_derived_cases_given_explicitly_get_the_larger_case_unless_turned_off(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`kope eval`, triage and a repair session's full checks hand the evaluator the derived cases themselves: still
    kope's, still covered; `EvalOptions(coverage=False)` judges the derived cases alone."""
    task = load_task(COVERAGE / "task.py")
    candidate = _candidate(tmp_path, wrong_large=True)
    derived = evaluator.cases(task, options=OPTIONS)
    result = evaluator.evaluate(task, candidate, options=OPTIONS, cases=derived)
    assert result.status == "fail" and [c.name for c in result.cases if c.name.startswith("coverage")]
    off = evaluator.evaluate(task, candidate, options=dataclasses.replace(OPTIONS, coverage=False), cases=derived)
    assert off.status == "pass" and off.unlaunched == ["_large (line 34)"]


def test_a_kernel_chosen_through_a_name_is_followed(evaluator: Evaluator, tmp_path: Path) -> None:
    """`launch = _small if n <= SMALL else _large; launch[grid](...)`: no launch names `_large`, but the host does, on
    a branch no derived case takes; the larger case judges it."""
    source = _candidate(tmp_path, wrong_large=True).read_text()
    chosen = source.replace(
        "        if n <= SMALL:\n            _small[grid](x, out, n, BLOCK=1024)\n"
        "        else:\n            _large[grid](x, out, n, BLOCK=1024)\n",
        "        launch = _small if n <= SMALL else _large\n        launch[grid](x, out, n, BLOCK=1024)\n",
    )
    assert chosen != source
    candidate = tmp_path / "chosen.py"
    candidate.write_text(chosen)
    assert judging.unlaunched(chosen, [_ran("_small")]) == [
        ("_large", chosen.splitlines().index("        launch = _small if n <= SMALL else _large") + 1)
    ]
    result = evaluator.evaluate(COVERAGE / "task.py", candidate, options=OPTIONS)
    assert result.status == "fail" and [c.name for c in result.cases if c.name.startswith("coverage")]
