"""Matching candidates to tasks in the layouts pipelines write, and in manifests; nothing dropped in silence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kope.ops import get_op
from kope.triage.layout import LayoutError, match, natural_key

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


def test_benchmark_versions_stay_apart(tmp_path: Path) -> None:
    # the same task name in two KernelBench versions: two problems, each candidate with its own version's task
    old = _write(tmp_path / "tasks" / "KernelBench_v0" / "level1" / "19_ReLU.py", TASK)
    new = _write(tmp_path / "tasks" / "v0.1" / "level1" / "19_ReLU.py", TASK.replace("torch.relu(x)", "x.relu()"))
    _write(tmp_path / "tasks" / "v0.1" / "level1" / "2_Sigmoid.py", TASK)
    _write(tmp_path / "runs" / "KernelBench_v0" / "level1" / "19_ReLU" / "sample_0.py", KERNEL)
    _write(tmp_path / "runs" / "v0.1" / "level1" / "19_ReLU" / "sample_0.py", KERNEL)
    _write(tmp_path / "runs" / "v0.1" / "level1" / "2_Sigmoid" / "sample_0.py", KERNEL)
    _write(tmp_path / "runs" / "level1" / "19_ReLU" / "sample_9.py", KERNEL)  # names no version: not guessed
    found = match(tmp_path / "tasks", tmp_path / "runs")
    by_id = {i.id: i for i in found.items}
    assert by_id["KernelBench_v0/level1/19_ReLU/sample_0.py"].task == str(old.resolve())
    assert by_id["v0.1/level1/19_ReLU/sample_0.py"].task == str(new.resolve())
    assert {i.problem for i in found.items} == {"KernelBench_v0/level1/19_ReLU", "v0.1/level1/19_ReLU", "2_Sigmoid"}
    (lost,) = found.unmatched
    assert "sample_9" in lost.candidate and "ambiguous" in lost.reason and "v0.1/level1/19_ReLU" in lost.reason
    # the flat layout names the level only: the version comes from the candidate's folder
    _write(tmp_path / "flat" / "v0.1" / "level_1_problem_19_sample_0_kernel.py", KERNEL)
    (flat,) = match(tmp_path / "tasks", tmp_path / "flat").items
    assert flat.task == str(new.resolve()) and flat.problem == "v0.1/level1/19_ReLU"


def test_problems_in_numeric_order(tmp_path: Path) -> None:
    for number in (100, 11, 2, 10, 1):
        _write(tmp_path / "tasks" / "level1" / f"{number}_Op.py", TASK)
        _write(tmp_path / "runs" / "level1" / f"{number}_Op" / "sample_10.py", KERNEL)
        _write(tmp_path / "runs" / "level1" / f"{number}_Op" / "sample_9.py", KERNEL)
    found = match(tmp_path / "tasks", tmp_path / "runs")
    assert [i.problem for i in found.items][::2] == ["1_Op", "2_Op", "10_Op", "11_Op", "100_Op"]
    assert [i.id for i in found.items][:2] == ["level1/1_Op/sample_9.py", "level1/1_Op/sample_10.py"]
    assert sorted(["a10", "a9", "a100", "b1"], key=natural_key) == ["a9", "a10", "a100", "b1"]


def test_manifest_model_and_source_verdict(tmp_path: Path) -> None:
    _write(tmp_path / "tasks" / "v0" / "level1" / "19_ReLU.py", TASK)
    _write(tmp_path / "tasks" / "v1" / "level1" / "19_ReLU.py", TASK)
    _write(tmp_path / "c" / "one.py", KERNEL)
    _write(tmp_path / "c" / "two.py", KERNEL)
    (tmp_path / "c" / "m.csv").write_text(
        "task,candidate,id,model,source,source_verdict,split,licence\n"
        "v0/level1/19_ReLU.py,one.py,a,gpt-x,https://example.org/r,PASS,dev,MIT\n"
        "v1/level1/19_ReLU.py,two.py,b,,,,tune,\n"
    )
    found = match(tmp_path / "tasks", tmp_path / "c" / "m.csv")
    first, second = found.items
    assert (first.id, first.model, first.source_verdict, first.problem) == ("a", "gpt-x", "pass", "v0/level1/19_ReLU")
    assert (second.model, second.source_verdict, second.problem) == (None, None, "v1/level1/19_ReLU")


def test_manifest_module_mode_per_row_and_a_wrong_one_unmatched(tmp_path: Path) -> None:
    _write(tmp_path / "tasks" / "level1" / "19_ReLU.py", TASK)
    for name in ("one", "two", "three"):
        _write(tmp_path / "c" / f"{name}.py", KERNEL)
    (tmp_path / "c" / "m.csv").write_text(
        "task,candidate,id,module_mode\n"
        "level1/19_ReLU.py,one.py,a,eval\n"
        "level1/19_ReLU.py,two.py,b,\n"
        "level1/19_ReLU.py,three.py,c,inference\n"
    )
    found = match(tmp_path / "tasks", tmp_path / "c" / "m.csv")
    assert [(i.id, i.module_mode) for i in found.items] == [("a", "eval"), ("b", None)]
    assert [u.reason for u in found.unmatched] == ["module_mode 'inference': train or eval"]
