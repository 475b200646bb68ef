"""Tolerance profiles: one table, the task's own TOLERANCES on top, and what `auto` picks for which task file."""

from __future__ import annotations

from pathlib import Path

import pytest

from kope.cases.task import load_task
from kope.cases.tolerance import PROFILES, Tolerance, is_kernelbench_task, resolve_profile, tolerance_for

TASK = """import torch
import torch.nn as nn

N = 16


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
"""


def _task(root: Path, relative: str, extra: str = "") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TASK + extra)
    return path


def test_each_profile_gives_every_dtype_its_tolerance() -> None:
    assert tolerance_for("float32").atol == pytest.approx(1e-4)
    assert tolerance_for("float32", profile="kernelbench") == Tolerance(atol=1e-2, rtol=1e-2)
    assert tolerance_for("bfloat16", profile="kernelbench").rtol == pytest.approx(1e-2)
    assert tolerance_for("float16", profile="kernelbench").atol == pytest.approx(1e-2)
    assert tolerance_for("int64", profile="kernelbench").atol == 0.0
    assert set(PROFILES["strict"]) == set(PROFILES["kernelbench"])


def test_a_task_override_wins_over_the_profile() -> None:
    custom = {"float32": Tolerance(atol=5e-3, rtol=0.0)}
    assert tolerance_for("float32", custom, profile="kernelbench").atol == pytest.approx(5e-3)
    assert tolerance_for("float16", custom, profile="kernelbench").atol == pytest.approx(1e-2)


def test_auto_picks_kernelbench_only_for_a_kernelbench_problem_file(tmp_path: Path) -> None:
    kernelbench = load_task(_task(tmp_path, "KernelBench/level1/19_ReLU.py"))
    assert is_kernelbench_task(kernelbench)
    assert resolve_profile("auto", kernelbench)[0] == "kernelbench"
    assert resolve_profile("strict", kernelbench) == ("strict", "--tolerance strict")
    level3 = load_task(_task(tmp_path, "tasks/level3/44_MiniGPTBlock.py"))
    assert resolve_profile("auto", level3)[0] == "kernelbench"
    for relative, extra in [
        ("ops/relu.py", ""),
        ("level1/relu.py", ""),
        ("level1/x_19_ReLU.py", ""),
        ("level1/19_ReLU_cases.py", "\n\ndef get_cases():\n    return [{'N': 4}]\n"),
        ("level1/20_ReLU.py", "\nTOLERANCES = {'float32': (1e-3, 1e-3)}\n"),
    ]:
        task = load_task(_task(tmp_path, relative, extra))
        assert not is_kernelbench_task(task), relative
        assert resolve_profile("auto", task)[0] == "strict", relative
    assert resolve_profile("kernelbench", load_task(_task(tmp_path, "ops/any.py")))[0] == "kernelbench"
