"""`kope debug` as a script relies on it: --out holds a kernel only when it passes, an attempt that did not pass
goes beside it under a name that says so, and the time budget stops the run."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import SCALE_GOOD, SCALE_TASK
from typer.testing import CliRunner

from kope.cli import app
from kope.models.base import Reply
from kope.models.replay import Exchange

BROKEN = SCALE_GOOD.read_text().replace("* 2.0", "* 2.5")
FIX = """The factor is wrong.
<<<<<<< SEARCH
tl.load(x_ptr + offsets, mask=mask) * 2.5
=======
tl.load(x_ptr + offsets, mask=mask) * 2.0
>>>>>>> REPLACE
"""
FAST = ["--device", "cpu", "--trials", "1", "--no-probes", "--store", "none", "--json"]


def debug(tmp_path: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN)
    result = CliRunner().invoke(app, ["debug", str(SCALE_TASK), str(broken), *args, *FAST])
    return result.exit_code, json.loads(result.stdout)


def test_a_repair_goes_to_out(tmp_path: Path) -> None:
    recording = tmp_path / "fix.jsonl"
    recording.write_text(Exchange(messages=[], reply=Reply(text=FIX)).model_dump_json() + "\n")
    out = tmp_path / "fixed.py"
    code, report = debug(tmp_path, "--model", f"replay:{recording}", "--out", str(out))
    assert code == 0 and report["status"] == "repaired" and report["output"] == str(out), report
    assert out.read_text() == SCALE_GOOD.read_text()
    assert not (tmp_path / "fixed.unrepaired.py").exists()
    assert Path(report["transcript"]) == tmp_path / "fixed.transcript.jsonl"


def test_the_time_budget_stops_the_run_and_out_stays_unwritten(tmp_path: Path) -> None:
    """One second: the first diagnosis spends it, so no search round starts; the attempt goes beside --out."""
    out = tmp_path / "fixed.py"
    code, report = debug(tmp_path, "--out", str(out), "--max-seconds", "1")
    assert code == 1 and report["status"] == "unrepaired" and report["stop_reason"] == "time-budget", report
    assert report["evaluations"] == 0 and report["iterations"] == 0
    assert not out.exists()
    assert report["output"] == str(tmp_path / "fixed.unrepaired.py")
    assert (tmp_path / "fixed.unrepaired.py").read_text() == BROKEN
