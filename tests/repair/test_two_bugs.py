"""Two independent bugs, neither fix enough alone to move the search's score: the first fix is kept because it changed
the failure (NaN elements gone), and the second edit on top of it repairs the kernel. Tiny shapes (the interpreter)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

TASK = textwrap.dedent(
    '''
    """The mean over rows of each row's sum of squares: one number."""
    import torch
    import torch.nn as nn

    ROWS = 24
    COLS = 20


    class Model(nn.Module):
        def forward(self, x):
            return (x * x).sum(dim=1).mean()


    def get_inputs():
        return [torch.randn(ROWS, COLS)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"ROWS": 24, "COLS": 20}, {"ROWS": 40, "COLS": 12}]
    '''
)

TWO_BUGS = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _squares(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        if row >= stride_row:
            return
        acc = 0.0
        for i in range(0, n_cols, BLOCK):
            cols = tl.arange(0, BLOCK)
            mask = i + cols < n_cols
            v = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0)
            acc += tl.sum(v * v)
        tl.store(out_ptr + row, acc)


    class ModelNew(nn.Module):
        def forward(self, x):
            rows, cols = x.shape
            out = torch.empty(rows, device=x.device, dtype=x.dtype)
            _squares[(rows,)](x, out, cols, x.stride(0), BLOCK=8)
            return out.mean()
    """
)
"""The early return compares the row with the row stride (rows past it are never written: NaN), and the loads
ignore the loop's `i` (every block reads the first). The output is one number, wrong either way: fixing one bug
leaves the mismatch at 100%."""


def test_early_return_offers_the_size_parameters_and_dropping_the_guard() -> None:
    program = Program.parse(TWO_BUGS, TASK)
    assert program is not None
    made = {e.description: e for e in edits(program, ["early-return"])}
    drop = made["drop the early return `if row >= stride_row: return`"]
    assert "stride_row" in drop.cue and "if row >= stride_row" not in drop.source
    assert "early return bound `stride_row` -> `n_cols`" in made
    fixed = Program.parse(TWO_BUGS.replace("row >= stride_row", "row >= n_cols"), TASK)
    assert fixed is not None and all(not e.cue for e in edits(fixed, ["early-return"]))


def repair(evaluator: Evaluator, tmp_path: Path, source: str, config: SearchConfig, name: str) -> tuple[str, int]:
    task, candidate = tmp_path / "task.py", tmp_path / f"{name}.py"
    task.write_text(TASK)
    candidate.write_text(source)
    debug = DebugConfig(probes=False, max_search_rounds=1, search_config=config)
    report = DebugLoop(None, evaluator, config=debug).run(task, candidate, tmp_path / f"{name}.fixed.py")
    return report.status, report.evaluations


def test_a_fix_that_only_removes_nans_is_a_base_for_the_second_fix(evaluator: Evaluator, tmp_path: Path) -> None:
    config = SearchConfig(max_evaluations=24, max_seconds=600)
    alone = SearchConfig(**{**vars(config), "informative_bases": 0, "pairs": 0})
    status, _ = repair(evaluator, tmp_path, TWO_BUGS, alone, "a")
    assert status == "unrepaired"
    status, _ = repair(evaluator, tmp_path, TWO_BUGS, config, "b")
    assert status == "repaired"
    fixed = (tmp_path / "b.fixed.py").read_text()
    assert "if row >= stride_row" not in fixed


def test_a_round_whose_candidates_run_out_widens_its_second_edits(evaluator: Evaluator, tmp_path: Path) -> None:
    """One second edit per base is too few here: the loads' fix ranks low on the base that drops the early return.
    Without widening the round ends exhausted; widened (1, then 2, 4, 8 second edits per base, and the informative
    edit past the one base allowed becomes a base), it reaches the fix."""
    narrow = dict(max_evaluations=200, max_seconds=600, pairs=0, second_edits=1, leading_edits=1)
    narrow |= dict(informative_bases=1, informative_edits=1)
    status, used = repair(evaluator, tmp_path, TWO_BUGS, SearchConfig(**narrow, widen=0), "a")  # type: ignore[arg-type]
    assert status == "unrepaired"
    status, more = repair(evaluator, tmp_path, TWO_BUGS, SearchConfig(**narrow, widen=3), "b")  # type: ignore[arg-type]
    assert status == "repaired" and more > used
    assert "if row >= stride_row" not in (tmp_path / "b.fixed.py").read_text()


def test_a_round_that_goes_on_from_the_same_start_widens_what_the_last_one_kept(
    evaluator: Evaluator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rounds of 30 evaluations: the first finds the informative base and runs out of its budget, the next goes on
    from the same start with its evaluated versions skipped, so it cannot find that base again. It widens the base
    the first kept (`Bases`); a search that forgets it between rounds ends exhausted."""
    from kope.repair import search

    narrow = dict(max_evaluations=30, max_seconds=600, pairs=0, second_edits=1, leading_edits=1)
    narrow |= dict(informative_bases=1, informative_edits=1, widen=3)
    config = DebugConfig(probes=False, max_search_rounds=8, search_config=SearchConfig(**narrow))  # type: ignore[arg-type]

    def run(name: str) -> tuple[str, list[search.SearchResult]]:
        candidate = tmp_path / f"{name}.py"
        candidate.write_text(TWO_BUGS)
        report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / f"{name}.fixed.py")
        return report.status, report.search

    task = tmp_path / "task.py"
    task.write_text(TASK)
    status, rounds = run("kept")
    assert status == "repaired" and len(rounds) >= 2 and rounds[0].informative and not rounds[-1].informative
    remember = search.Bases.of

    def forget(self: search.Bases, source: str) -> search.Bases:
        self.start = ""
        return remember(self, source)

    monkeypatch.setattr(search.Bases, "of", forget)
    status, rounds = run("forgotten")
    assert status == "unrepaired" and rounds[-1].stop_reason == "exhausted"


def test_one_bug_costs_no_more_evaluations_than_before(evaluator: Evaluator, tmp_path: Path) -> None:
    one_bug = TWO_BUGS.replace("row >= stride_row", "row >= n_cols + 1000")  # a harmless guard: only the loads
    config = SearchConfig(max_evaluations=24, max_seconds=600)
    alone = SearchConfig(**{**vars(config), "informative_bases": 0, "pairs": 0, "screen": 0})  # single edits' way
    before = repair(evaluator, tmp_path, one_bug, alone, "a")
    after = repair(evaluator, tmp_path, one_bug, config, "b")
    assert before[0] == after[0] == "repaired"
    assert after[1] <= before[1]


def test_a_start_right_on_the_shown_case_is_searched_on_the_other_case_it_fails(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    # The guard leaves rows past n_cols + 4 unwritten: none of the shown case's 24 rows (20 columns), 24 of the other
    # case's 40 (12 columns). That case joins the search's, so only a version right on it gets the full check.
    from kope.cases.task import load_task
    from kope.repair.search import RepairSearch

    path = tmp_path / "task.py"
    path.write_text(TASK)
    task = load_task(path)
    shown = [c for c in evaluator.cases(task) if c.visible]
    source = TWO_BUGS.replace("row >= stride_row", "row >= n_cols + 4").replace(
        "row * stride_row + cols", "row * stride_row + i + cols"
    )
    checked: list[str] = []

    def accept(version: str) -> bool:
        checked.append(version)
        candidate = tmp_path / "accept.py"
        candidate.write_text(version)
        return evaluator.evaluate(task, candidate).status == "pass"

    search = RepairSearch(evaluator, SearchConfig(max_evaluations=16, max_seconds=600))
    result = search.run(task, source, None, shown, accept, scratch=tmp_path / "s", start_score=(0, 0.0, 0.0))
    assert result.screen and result.accepted is not None
    assert "row >= n_cols + 4" not in result.accepted
    assert result.acceptance_checks == len(checked) == 1


def test_two_edits_lines_apart_combine_and_edits_too_close_do_not() -> None:
    from kope.repair.search import _combined

    base = "a\nb\nc\nd\ne\nf\ng\n"
    one, two = base.replace("b", "B"), base.replace("f", "F\nF2")
    assert _combined(base, one, two, apart=2) == _combined(base, two, one) == "a\nB\nc\nd\ne\nF\nF2\ng\n"
    assert _combined(base, one, two, apart=3) is None
    assert _combined(base, one, base.replace("b", "b2"), apart=0) is None


def test_a_mean_error_down_a_third_is_informative_only_from_a_nonzero_one_with_no_more_wrong() -> None:
    """Every element closer by a third counts as a sign of one bug of two fixed; a mean error of 0.0 over no finite
    element (a start that is NaN everywhere) says nothing, and more wrong elements undo it."""
    from kope.protocol.results import CaseResult, EvalResult, OutputDiff
    from kope.repair.search import _informative_change

    def case(mean: float, wrong: float = 1.0, nans: int = 0) -> CaseResult:
        diff = OutputDiff(
            index=0, shape=[8], dtype="float32", numel=8, mismatch_count=int(8 * wrong), max_abs_err=1.0,
            max_rel_err=1.0, mean_abs_err=mean, nan_mismatch=nans, atol=1e-2, rtol=1e-2,
        )  # fmt: skip
        return CaseResult(
            name="shrunk", overrides={}, visible=True, passed=False, max_rel_err=1.0, mismatch_fraction=wrong,
            outputs=[diff],
        )  # fmt: skip

    def result(*cases: CaseResult) -> EvalResult:
        return EvalResult.model_construct(status="fail", cases=list(cases), error=None)

    assert "mean error" in _informative_change({"shrunk": case(0.8)}, result(case(0.3)))
    assert "mean error" in _informative_change({"shrunk": case(0.8)}, result(case(0.5)))
    assert _informative_change({"shrunk": case(0.8)}, result(case(0.6))) == ""
    assert _informative_change({"shrunk": case(0.0, nans=8)}, result(case(0.0, nans=8))) == ""
    assert _informative_change({"shrunk": case(0.8, wrong=0.5)}, result(case(0.1, wrong=0.75))) == ""
