"""`kope bench`: suite, run (resumable) and report from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kope.cli import app

runner = CliRunner()


def test_bench_suite_json() -> None:
    result = runner.invoke(app, ["bench", "suite", "default", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["cases"] >= 150 and len(data["task"]) == 24 and "missing-mask" in data["label"]


@pytest.mark.slow
def test_bench_run_and_report(tmp_path: Path) -> None:
    results, report = tmp_path / "results", tmp_path / "report"
    args = [
        "bench",
        "run",
        "default",
        "--strategy",
        "debug",
        "--model",
        "offline",
        "--limit",
        "1",
        "--ablate",
        "kb",
        "--no-baseline",
        "--no-probes",
        "--trials",
        "1",
        "--device",
        "cpu",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(results),
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "1 attempt(s) run, 0 already done" in " ".join(first.output.split())
    again = runner.invoke(app, args)
    assert "0 attempt(s) run, 1 already done" in " ".join(again.output.split())
    (row,) = [json.loads(line) for line in (results / "attempts.jsonl").read_text().splitlines()]
    assert row["arm"] == "kb" and row["outcome"] == "unrepaired" and row["label"]

    regen = runner.invoke(
        app,
        [
            "bench",
            "run",
            "default",
            "--strategy",
            "regenerate",
            "--limit",
            "1",
            "--out",
            str(results),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    # regeneration offline is a usage error (nothing writes code), refused before any work
    assert regen.exit_code == 2 and "--model" in regen.output, regen.output
    shown = runner.invoke(app, ["bench", "report", str(results), "--out", str(report)])
    assert shown.exit_code == 0, shown.output
    assert "kb" in (report / "report.md").read_text()
    bad = runner.invoke(app, ["bench", "run", "default", "--ablate", "telepathy", "--out", str(results)])
    assert bad.exit_code == 2 and "unknown ablation" in bad.output
