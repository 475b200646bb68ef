"""One candidate's triage: the names of the files it writes, its class, the repair of a near miss."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kope.evaluate import EvalOptions
from kope.triage.layout import Item
from kope.triage.report import render
from kope.triage.run import TriageSummary
from kope.triage.worker import CLASSES, TriageJob, TriageRow, TriageWorker, classify, mendable, slug


def test_a_plain_id_keeps_its_readable_name() -> None:
    assert slug("level1/1_relu/sample_1.py") == "level1__1_relu__sample_1"


def test_ids_that_would_share_a_name_get_distinct_names() -> None:
    ids = ["a/b.py", "a__b.py", "a_/b.py", "a/_b.py", "a b.py", "a?b.py", "a_b.py"]
    names = [slug(ident) for ident in ids]
    assert len(set(names)) == len(ids), names
    assert all("/" not in name for name in names)


JUDGE = Path(__file__).parents[1] / "fixtures" / "judge"
OPTIONS = EvalOptions(trials=1, timeout_s=60, memory_mb=2048)


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TriageWorker]:
    made = TriageWorker(cache_dir=tmp_path_factory.mktemp("triage-cache"))
    yield made
    made.close()


def _row(
    worker: TriageWorker, out: Path, task: str, candidate: str, *, repair: bool = True, root: Path = JUDGE
) -> TriageRow:
    item = Item(
        id=f"{Path(task).stem}/{candidate}",
        problem=Path(task).stem,
        task=str(root / "tasks" / task) if root == JUDGE else str(root / task),
        candidate=str(root / "candidates" / candidate) if root == JUDGE else str(root / candidate),
    )
    job = TriageJob(
        item=item,
        task_text=Path(item.task).read_text(),
        candidate_text=Path(item.candidate).read_text(),
        options=OPTIONS,
        repair=repair,
    )
    row = worker.run(job)
    row.save_files(out)
    return row


def test_classes_of_statuses() -> None:
    assert classify("pass") == "pass" and classify("fail") == "near-miss"
    assert classify("reject") == "cheat" and classify("error", "runtime") == "broken"
    assert classify("error", "unsupported") == "unsupported-here"
    assert classify("fail", None, ["interpreter-limit: bf16 tl.dot"]) == "unsupported-here"
    assert "unsupported-here" in CLASSES


@pytest.mark.slow
def test_wrong_values_and_a_gate_finding_is_a_near_miss_whose_repair_the_gates_judge(
    worker: TriageWorker, tmp_path: Path
) -> None:
    row = _row(worker, tmp_path, "relu_scale.py", "relu_torch_wrong_scale.py")
    assert row.error is None, row.error
    assert row.before == "near-miss" and row.status == "fail"
    assert "torch-compute" in row.findings
    assert row.repair != "none", "a near miss gets its repair"
    assert row.after != "pass" and row.repair != "repaired", "PyTorch still computes the ReLU: the gates reject"


@pytest.mark.slow
def test_right_values_from_pytorch_stay_a_cheat(worker: TriageWorker, tmp_path: Path) -> None:
    row = _row(worker, tmp_path, "relu_scale.py", "relu_torch_right_scale.py")
    assert row.before == "cheat" and row.repair == "none" and "torch-compute" in row.findings


@pytest.mark.slow
def test_a_scalar_returned_as_one_element_is_a_near_miss_repaired_offline(worker: TriageWorker, tmp_path: Path) -> None:
    row = _row(worker, tmp_path, "total_sum.py", "total_sum_one_element.py")
    assert row.error is None, row.error
    assert row.before == "near-miss" and row.error_kind is None
    assert any(".reshape(())" in note for note in row.notes)
    assert row.repair == "repaired" and row.after == "pass"
    assert row.repaired is not None and "return out.reshape(())" in (tmp_path / row.repaired).read_text()


API = Path(__file__).parents[1] / "fixtures" / "api"


@pytest.mark.slow
def test_a_broken_kernel_kope_can_mend_is_repaired_and_one_it_cannot_is_left(
    worker: TriageWorker, tmp_path: Path
) -> None:
    """An autotuned block passed again at the launch never runs (broken); triage mends it (kope.bugs.api). A broken
    kernel no edit of kope's mends is not searched at all."""
    row = _row(worker, tmp_path, "rownorm_task.py", "rownorm_autotune_again.py", root=API)
    assert (row.before, row.error_kind, row.repair, row.after) == ("broken", "runtime", "repaired", "pass")
    assert "-        _row_norm[(n_rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))" in (row.diff or "")
    (tmp_path / "hopeless.py").write_text(
        (API / "rownorm_good.py").read_text().replace("tl.sqrt(", "tl.no_such_function(")
    )
    row = _row(worker, tmp_path, str(API / "rownorm_task.py"), str(tmp_path / "hopeless.py"), root=tmp_path)
    assert (row.before, row.repair, row.after) == ("broken", "none", "broken")


@pytest.mark.slow
def test_bf16_dot_in_the_interpreter_is_unsupported_here_not_a_near_miss(worker: TriageWorker, tmp_path: Path) -> None:
    row = _row(worker, tmp_path, "matmul_bf16.py", "matmul_bf16_dot.py")
    assert row.before == "unsupported-here" and row.repair == "none"
    assert row.limits and row.limits[0].startswith("interpreter-limit: bf16 tl.dot")


@pytest.mark.slow
def test_the_row_names_its_profile_and_the_disagreement(worker: TriageWorker, tmp_path: Path) -> None:
    row = _row(worker, tmp_path, "row_sum.py", "row_sum_bf16.py", repair=False)
    assert row.before == "near-miss" and row.tolerance_profile == "strict"
    assert row.profile_disagreement is not None and row.profile_disagreement.kernelbench == "pass"
    page = render(TriageSummary(out=tmp_path, total=1, rows=[row]))
    assert "profiles disagree: strict fail, kernelbench pass" in page and "judged strict" in page


def test_a_broken_row_whose_compiler_message_an_edit_mends_is_repaired() -> None:
    """`carried-type` reads the compiler's message: triage offers the repair only with the row's error at hand."""
    kernel = (Path(__file__).parents[1] / "fixtures" / "api" / "rownorm_good.py").read_text()
    source = kernel.replace(
        "    norm = tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)\n",
        "    acc = 0\n    for step in range(2):\n        acc += x * x\n"
        "    norm = tl.sqrt(tl.sum(acc, axis=0) / 2 + 1e-6)\n",
    )
    line = source.splitlines().index("    for step in range(2):") + 1
    message = (
        "forward failed on trial 0: GpuCompileError: Triton's GPU compiler refuses `_row_norm`: AssertionError("
        "\"Loop-carried variable acc has initial type int32 but is re-assigned to <['128'], fp32> in loop! Please "
        f'make sure that the type stays consistent.") (candidate line {line}: for step in range(2):)'
    )
    row = TriageRow(id="a.py", problem="p", task="t", candidate="a.py", before="broken", after="broken")
    row.error_kind = "runtime"
    assert not mendable(row, source)
    row.error_message = message
    assert mendable(row, source)
