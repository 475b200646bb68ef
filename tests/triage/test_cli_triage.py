"""`kope triage` from the command line: matching, the unmatched candidate reported, rows, the report, and
an interrupted run resumed (a rerun runs only the candidates without a row)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kope.cli import app
from kope.ops import get_op
from kope.triage.sample import make_run


def _json(output: str) -> dict[str, object]:
    """The JSON object in the output (the progress bar, on stderr, may surround it)."""
    found, _ = json.JSONDecoder().raw_decode(output[output.index("{\n") :])
    return found


def test_triage_command(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", ops=["relu"], good=0, near_misses=0, broken=2, cheats=1, small=True)
    (run.candidates / "level1" / "77_orphan").mkdir()
    (run.candidates / "level1" / "77_orphan" / "sample_0.py").write_text(get_op("relu").kernel_path.read_text())
    out = tmp_path / "out"
    args = [
        "triage",
        str(run.tasks),
        str(run.candidates),
        "--out",
        str(out),
        "--trials",
        "1",
        "--json",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    summary = _json(first.output)
    assert summary["before"] == {"pass": 0, "near-miss": 0, "broken": 2, "cheat": 1, "unsupported-here": 0, "error": 0}
    assert summary["unmatched"] == 1 and "77_orphan" in first.output
    assert (out / "report.html").is_file()
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3 and '"error_kind":"runtime"' in "".join(lines)
    # as if the run had been stopped before its runtime-broken candidate: the rerun runs that one alone
    (out / "results.jsonl").write_text("".join(line + "\n" for line in lines if '"error_kind":"runtime"' not in line))
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    resumed = _json(again.output)
    assert (resumed["resumed"], resumed["ran"], resumed["before"]) == (2, 1, summary["before"])
    assert len((out / "results.jsonl").read_text().splitlines()) == 3
    bad = CliRunner().invoke(app, [*args[:5], "--executor", "dask"])
    assert bad.exit_code != 0 and "unknown executor" in bad.output
