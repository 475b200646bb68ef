"""Constants and normalizers (kope.bugs.constants): an average pool's divisor, read against the reference's pool and
repaired through the real evaluator (tiny shapes)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

POOL = FIXTURES / "pool"


def windows(candidate: str, reference: str) -> list[tuple[str, bool]]:
    program = Program.parse(candidate, reference)
    assert program is not None
    return [(e.description, e.grounded) for e in edits(program, ["divisor"]) if "window" in e.description]


def test_a_count_of_the_positions_inside_becomes_the_whole_window_where_the_reference_counts_the_padding() -> None:
    candidate, task = (POOL / "avgpool_counts_valid.py").read_text(), (POOL / "avgpool_task.py").read_text()
    # the divisor holds the count the two loops add to: its whole window is the product of their trip counts
    (window,) = windows(candidate, task)
    assert window == (
        "divisor `tl.maximum(count, 1.0)` -> `KH * KW` (every position its loops visit: a pool's window, padding in)",
        True,
    )
    # a reference pool that leaves the padding out of its divisor: still offered, no longer grounded
    excluded = task.replace("padding=padding)", "padding=padding, count_include_pad=False)")
    assert windows(candidate, excluded) == [(window[0], False)]
    # a count a single statement sets, not one its loops add to: no window
    assert windows(candidate.replace("count += valid.to(tl.float32)", "count = valid.to(tl.float32)"), task) == []


def test_the_search_repairs_a_pool_that_divides_by_the_positions_inside(evaluator: Evaluator, tmp_path: Path) -> None:
    shutil.copy(POOL / "avgpool_task.py", tmp_path / "task.py")
    shutil.copy(POOL / "avgpool_counts_valid.py", tmp_path / "candidate.py")
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=6))
    report = DebugLoop(None, evaluator, config=config).run(
        tmp_path / "task.py", tmp_path / "candidate.py", tmp_path / "fixed.py"
    )
    accepted = [t.description for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert report.status == "repaired" and len(accepted) == 1 and "`KH * KW`" in accepted[0], accepted
    assert "acc / (KH * KW)" in (tmp_path / "fixed.py").read_text()
