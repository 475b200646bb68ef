"""What kope learned, readable: a learned pattern's id says what it fixes, `kope kb show` opens it (where it was
learned, the fix, the success rate with counts), `kope memory stats` is a table."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kope.cases.task import load_task
from kope.cli import app
from kope.memory import ExperienceStore
from kope.memory.learned import learn
from kope.ops import get_op

runner = CliRunner()
BEFORE = "def f(x):\n    denominator = x.shape[-1] - 1\n    return denominator\n"
AFTER = "def f(x):\n    denominator = x.shape[-1]\n    return denominator\n"


def store_with_a_learned_pattern(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "memory.db"
    with ExperienceStore.open(db) as store:
        task = store.ensure_task(load_task(get_op("row_mean").task_path))
        record, _ = learn(
            store,
            task_id=task.id,
            family=task.family,
            before=BEFORE,
            after=AFTER,
            explanation="The mean divides by n - 1 instead of n. Use the row length.",
            features={"scaled": True},
            cues=[],
            error_signature=None,
            source_version=None,
            fixed_version=None,
        )
        for outcome in ("fixed", "fixed", "applied"):
            store.add_pattern_evidence(record.pattern_id, outcome, device="cpu", task_id=task.id)  # type: ignore[arg-type]
    return db, record.pattern_id


def test_a_learned_pattern_has_a_readable_id_and_kb_show_opens_it(tmp_path: Path) -> None:
    db, pattern_id = store_with_a_learned_pattern(tmp_path)
    assert pattern_id.startswith("learned-denominator-"), pattern_id  # named by what the fix changed
    shown = runner.invoke(app, ["kb", "show", pattern_id, "--store", str(db)])
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert "learned from: task row_mean (" in text and "a reduction kernel, in the store" in text  # where
    assert "-    denominator = x.shape[-1] - 1" in text and "+    denominator = x.shape[-1]" in text  # the fix
    assert "fixed 2 of 3 kernel(s) it was applied to (67%)" in text  # the success rate, with counts
    data = json.loads(runner.invoke(app, ["kb", "show", pattern_id, "--store", str(db), "--json"]).stdout)
    assert data["evidence"] == {"applied": 3, "fixed": 2} and data["learned"]["pattern_id"] == pattern_id
    listed = json.loads(runner.invoke(app, ["kb", "list", "--store", str(db), "--json"]).stdout)
    assert {"id": pattern_id, "origin": "learned"}.items() <= next(p for p in listed if p["id"] == pattern_id).items()


def test_kb_show_of_an_unknown_id_says_where_it_looked(tmp_path: Path) -> None:
    db, _ = store_with_a_learned_pattern(tmp_path)
    missing = runner.invoke(app, ["kb", "show", "learned-nothing-000000", "--store", str(db)])
    assert (
        missing.exit_code == 2 and "nor in the experience store" in missing.output and "kope kb list" in missing.output
    )
    shipped = runner.invoke(app, ["kb", "show", "missing-mask", "--store", "none"])
    assert shipped.exit_code == 0 and "success:" not in shipped.output


def test_memory_stats_is_a_table(tmp_path: Path) -> None:
    db, pattern_id = store_with_a_learned_pattern(tmp_path)
    result = runner.invoke(app, ["memory", "stats", "--store", str(db)], terminal_width=120)
    assert result.exit_code == 0, result.output
    assert "{" not in result.output and "'" not in result.output  # no Python dict
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.output.splitlines() if "│" in line
    }
    assert rows["tasks"] == "1" and rows["learned patterns"] == "1" and rows["pattern evidence"] == "3"
    assert rows[pattern_id] == "2"  # the most useful patterns: fixed 2 (of 3, 67%)
    assert "67%" in result.output
