"""`kope triage` from the command line: matching, the unmatched candidate reported, rows, the report, a rerun."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kope.cli import app
from kope.ops import get_op
from kope.triage.sample import make_run


def _json(output: str) -> dict[str, object]:
    """The JSON object in the output (the progress bar, on stderr, may surround it)."""
    found, _ = json.JSONDecoder().raw_decode(output[output.index('{\n'):])
    return found


def test_triage_command(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", ops=["relu"], good=0, near_misses=0, broken=1, cheats=1, small=True)
    (run.candidates / "level1" / "77_orphan").mkdir()
    (run.candidates / "level1" / "77_orphan" / "sample_0.py").write_text(get_op("relu").kernel_path.read_text())
    out = tmp_path / "out"
    args = ["triage", str(run.tasks), str(run.candidates), "--out", str(out), "--trials", "1", "--json",
            "--cache-dir", str(tmp_path / "cache")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    summary = _json(first.output)
    assert summary["before"] == {"pass": 0, "near-miss": 0, "broken": 1, "cheat": 1, "error": 0}
    assert summary["unmatched"] == 1 and "77_orphan" in first.output
    assert (out / "report.html").is_file() and len((out / "results.jsonl").read_text().splitlines()) == 2
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and _json(again.output)["resumed"] == 2
    bad = CliRunner().invoke(app, [*args[:5], "--executor", "dask"])
    assert bad.exit_code != 0 and "unknown executor" in bad.output
