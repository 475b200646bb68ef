"""Matching candidates to tasks in the layouts pipelines write, and in manifests; nothing dropped in silence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kope.ops import get_op
from kope.triage.layout import LayoutError, match

TASK = get_op("relu").task_path.read_text()
KERNEL = get_op("relu").kernel_path.read_text()


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_kernelbench_folders_per_problem(tmp_path: Path) -> None:
    _write(tmp_path / "tasks" / "level1" / "19_ReLU.py", TASK)
    _write(tmp_path / "tasks" / "level2" / "19_Other.py", TASK)
    _write(tmp_path / "runs" / "19_ReLU" / "sample_0.py", KERNEL)
    _write(tmp_path / "runs" / "level2" / "19_Other" / "sample_1.py", KERNEL)
    _write(tmp_path / "runs" / "42_Missing" / "sample_0.py", KERNEL)
    found = match(tmp_path / "tasks", tmp_path / "runs")
    assert {(i.id, i.problem) for i in found.items} == {
        ("19_ReLU/sample_0.py", "19_ReLU"),
        ("level2/19_Other/sample_1.py", "19_Other"),
    }
    (lost,) = found.unmatched
    assert lost.candidate.endswith("42_Missing/sample_0.py") and "42_Missing" in lost.reason


def test_flat_kernelbench_names(tmp_path: Path) -> None:
    _write(tmp_path / "tasks" / "level1" / "19_ReLU.py", TASK)
    _write(tmp_path / "tasks" / "level1" / "20_LeakyReLU.py", TASK)
    _write(tmp_path / "out" / "level_1_problem_19_sample_0_kernel.py", KERNEL)
    _write(tmp_path / "out" / "level_1_problem_20_sample_3_kernel.py", KERNEL)
    _write(tmp_path / "out" / "level_2_problem_19_sample_0_kernel.py", KERNEL)
    _write(tmp_path / "out" / "notes.py", "x = 1\n")
    found = match(tmp_path / "tasks", tmp_path / "out")
    assert {(i.id, i.problem) for i in found.items} == {
        ("level_1_problem_19_sample_0_kernel.py", "19_ReLU"),
        ("level_1_problem_20_sample_3_kernel.py", "20_LeakyReLU"),
    }
    reasons = {Path(u.candidate).name: u.reason for u in found.unmatched}
    assert "level 2 problem 19" in reasons["level_2_problem_19_sample_0_kernel.py"]
    assert "not recognised" in reasons["notes.py"]


def test_a_task_per_subdirectory_in_one_tree(tmp_path: Path) -> None:
    _write(tmp_path / "relu" / "task.py", TASK)
    _write(tmp_path / "relu" / "try_a.py", KERNEL)
    _write(tmp_path / "relu" / "try_b.py", KERNEL)
    found = match(tmp_path, tmp_path)
    assert sorted(i.id for i in found.items) == ["relu/try_a.py", "relu/try_b.py"] and not found.unmatched
    assert {i.problem for i in found.items} == {"relu"}


def test_manifests(tmp_path: Path) -> None:
    _write(tmp_path / "tasks" / "relu.py", TASK)
    _write(tmp_path / "c" / "one.py", KERNEL)
    (tmp_path / "c" / "list.csv").write_text("task,candidate,id\nrelu.py,one.py,first\nnope.py,one.py,\n")
    found = match(tmp_path / "tasks", tmp_path / "c" / "list.csv")
    assert [(i.id, i.problem) for i in found.items] == [("first", "relu")]
    assert len(found.unmatched) == 1 and "no task file" in found.unmatched[0].reason
    (tmp_path / "c" / "list.json").write_text(
        json.dumps([{"task": "relu.py", "candidate": "one.py"}, {"task": "relu.py", "candidate": "gone.py"}])
    )
    found = match(tmp_path / "tasks", tmp_path / "c" / "list.json")
    assert [i.id for i in found.items] == ["one.py"] and found.unmatched[0].reason == "no such candidate file"
    with pytest.raises(LayoutError):
        match(tmp_path / "tasks", tmp_path / "missing")
