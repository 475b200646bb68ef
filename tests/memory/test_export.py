"""Exports (json, dot, html) and the `kope memory` and `kope optimize` commands."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK
from typer.testing import CliRunner

from kope.cases.task import load_task
from kope.cli import app
from kope.memory import DecisionIn, ExperienceStore
from kope.memory.export import collect, export
from kope.ops import get_op
from kope.protocol.results import CaseResult, EvalResult, Timing

runner = CliRunner()


def timed(ms: float, status: str = "pass") -> EvalResult:
    case = CaseResult(
        name="c",
        overrides={},
        visible=True,
        passed=status == "pass",
        timing=Timing(method="interpreter-wall", candidate_ms=ms),
    )
    return EvalResult(
        status=status,
        cases=[case],
        cases_run="all",
        task="t",
        candidate="c",  # type: ignore[arg-type]
        device="cpu",
        seed=0,
    )


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    with ExperienceStore.open(path) as store:
        task = store.ensure_task(load_task(get_op("relu").task_path))
        run = store.start_run("optimize", task.id, model="offline", device="cpu-interpreter")
        start = store.record_step(run.id, task.id, "BLOCK = 1024\n", result=timed(100.0))
        store.update_run(run.id, start_version=start.version.id)
        fast = store.record_step(
            run.id,
            task.id,
            "BLOCK = 2048\n",
            parent_id=start.version.id,
            result=timed(50.0),
            made=DecisionIn(kind="launch-config", text="BLOCK 1024→2048", diff="-1024\n+2048"),
        )
        store.record_step(
            run.id,
            task.id,
            "BLOCK = 16\n",
            parent_id=start.version.id,
            result=timed(0.0, "fail"),
            made=DecisionIn(kind="launch-config", text="BLOCK 1024→16 <script>"),
        )
        store.finish_run(
            run.id,
            status="improved",
            stop_reason="iteration-limit",
            best_version=fast.version.id,
            summary={"speedup_vs_start": 2.0, "method": "interpreter-wall"},
        )
        other = store.start_run("optimize", task.id, model="scripted", device="cpu-interpreter")
        store.record_step(other.id, task.id, "BLOCK = 1024\n", result=timed(90.0))
        store.record_step(
            other.id,
            task.id,
            "BLOCK = 4096\n",
            parent_id=start.version.id,
            result=timed(40.0),
            made=DecisionIn(kind="edit", text="bigger still"),
            evidence={f"decision:{fast.decision_id}": fast.version.id, "pattern:missing-mask": None},
        )
        store.add_edge("fixed_by", start.version.id, dst=fast.version.id, run_id=run.id)
    return path


def test_exports(filled: Path) -> None:
    with ExperienceStore.open(filled) as store:
        data = json.loads(export(store, "json"))
        assert len(data["runs"]) == 2 and len(data["versions"]) == 4 and len(data["decisions"]) == 3
        assert {e["kind"] for e in data["edges"]} == {"derived_from", "alternative_of", "used_evidence", "fixed_by"}
        assert len(collect(store, run_id=1).runs) == 1
        dot = export(store, "dot")
        assert dot.startswith("digraph") and "v1 -> v2;" in dot and "style=dotted" in dot and "fixed_by" in dot
        page = export(store, "html")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2
    assert "<script" not in page and "&lt;script&gt;" in page, "text is escaped, the page runs no script"
    assert not re.search(r"(src|href)=['\"]https?:", page), "self-contained"
    assert "used_evidence" in page and "decision:" in page and "2.00x" in page


@pytest.mark.slow
def test_memory_commands(filled: Path, tmp_path: Path) -> None:
    stats = runner.invoke(app, ["memory", "stats", "--store", str(filled), "--json"])
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.output)["versions"] == 4
    shown = runner.invoke(app, ["memory", "show", "run:1", "--store", str(filled), "--json"])
    assert shown.exit_code == 0 and len(json.loads(shown.output)["decisions"]) == 2
    version = runner.invoke(app, ["memory", "show", "version:2", "--store", str(filled), "--json"])
    assert json.loads(version.output)["lineage"] == [1]
    missing = runner.invoke(app, ["memory", "show", "run:99", "--store", str(filled)])
    assert missing.exit_code == 1
    target = tmp_path / "graph.html"
    exported = runner.invoke(
        app, ["memory", "export", "--format", "html", "--out", str(target), "--store", str(filled)]
    )
    assert exported.exit_code == 0 and target.read_text().startswith("<!DOCTYPE html>")
    assert runner.invoke(app, ["memory", "export", "--format", "xml", "--store", str(filled)]).exit_code == 2


@pytest.mark.slow
def test_optimize_command(tmp_path: Path) -> None:
    kernel = tmp_path / "scale.py"
    kernel.write_text(SCALE_GOOD.read_text())
    store = tmp_path / "m.db"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kope",
            "optimize",
            str(SCALE_TASK),
            str(kernel),
            "--max-iterations",
            "1",
            "--trials",
            "1",
            "--device",
            "cpu",
            "--store",
            str(store),
            "--confirm",
            "0",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr  # a correct result, faster or not
    report = json.loads(done.stdout)
    assert report["timing_method"] == "interpreter-wall" and report["speedup_vs_reference"] is None
    assert report["evaluations"] == 2 and Path(report["output"]).is_file()
    with ExperienceStore.open(store) as opened:
        assert opened.stats().runs_by_kind == {"optimize": 1}
