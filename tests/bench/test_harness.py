"""The harness on a tiny suite: offline, scripted and replayed models, ablations, resume, workers, report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK, sandbox_level

from kope.bench.corpus import MANIFEST, SuiteEntry, SuiteManifest, load_suite
from kope.bench.harness import Attempt, BenchError, parse_arms, read_attempts, run_bench
from kope.bench.metrics import compute
from kope.bench.report import CHARTS, write_report
from kope.evaluate import EvalOptions, Evaluator
from kope.models.base import Model, Reply
from kope.models.replay import Exchange, ScriptedModel

GOOD = SCALE_GOOD.read_text()
WRONG_FACTOR = GOOD.replace("* 2.0", "* 2.5")
FLOOR_GRID = GOOD.replace("triton.cdiv(n, 256)", "n // 256")
FIX = """The factor is wrong.
<<<<<<< SEARCH
tl.load(x_ptr + offsets, mask=mask) * 2.5
=======
tl.load(x_ptr + offsets, mask=mask) * 2.0
>>>>>>> REPLACE
"""
CHEAT = (
    "```python\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x * "
    "2.0\n```"
)
FAST = EvalOptions(trials=1, timeout_s=20)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    (root / "factor.py").write_text(WRONG_FACTOR)
    (root / "grid.py").write_text(FLOOR_GRID)
    entries = [
        SuiteEntry(id="scale/grid", task=str(SCALE_TASK), candidate="grid.py", label="grid-too-small"),
        SuiteEntry(id="scale/factor", task=str(SCALE_TASK), candidate="factor.py", label="wrong-constant"),
    ]
    (root / MANIFEST).write_text(SuiteManifest(entries=entries).model_dump_json())
    return root


def scripted_fix(spec: str) -> Model:
    return ScriptedModel([FIX])


def scripted_good_file(spec: str) -> Model:
    return ScriptedModel([f"```python\n{GOOD}```"])


def scripted_cheat(spec: str) -> Model:
    return ScriptedModel([CHEAT])


def test_parse_arms() -> None:
    assert parse_arms([]) == ["none"]
    assert parse_arms(["kb,diagnosis", "integrity"]) == ["none", "kb", "diagnosis", "integrity"]
    assert parse_arms(["recipes+kb"], baseline=False) == ["kb+recipes"]
    with pytest.raises(BenchError):
        parse_arms(["telepathy"])


def test_offline_run_resumes_and_reports(evaluator: Evaluator, suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    loaded = load_suite(suite)
    first = run_bench(
        loaded, strategy="debug", model="offline", out=out, options=FAST, evaluator=evaluator, probes=False
    )
    assert first.ran == 2 and first.skipped == 0
    rows = {(r.case, r.arm): r for r in read_attempts(out)}
    grid = rows[("scale/grid", "none")]
    assert grid.outcome == "repaired" and grid.passed and grid.accepted and grid.tokens == 0
    assert "grid-too-small" in grid.hypotheses[:3] and grid.iterations >= 1
    assert grid.job_s >= grid.wall_s > 0 and grid.eval_s > 0 and grid.output and Path(grid.output).is_file()
    assert "scale" not in grid.output, "output paths do not name the case (no label leaks into error messages)"

    again = run_bench(
        loaded, strategy="debug", model="offline", out=out, options=FAST, evaluator=evaluator, probes=False
    )
    assert again.ran == 0 and again.skipped == 2 and len(read_attempts(out)) == 2

    regen = run_bench(
        loaded, strategy="regenerate", model="offline", out=out, samples=2, limit=1, options=FAST, evaluator=evaluator
    )
    assert regen.ran == 2 and all(r.outcome == "needs-model" for r in regen.rows)

    metrics = {(m.strategy, m.arm, m.label): m for m in compute(read_attempts(out), k=2)}
    full = metrics[("debug", "none", "all")]
    assert full.cases == 2 and full.pass_at_1 == pytest.approx(full.successes / 2) and full.top3 is not None
    assert metrics[("regenerate", "none", "all")].needs_model

    report = write_report([out], tmp_path / "report", k=2)
    text = report.read_text()
    assert "## Overall" in text and "## Pass@1 per taxonomy id" in text and "needs a model" in text
    assert "grid-too-small" in text and "## Time" in text and "workers" in text
    for chart in CHARTS:
        data = (tmp_path / "report" / chart).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 2000


def test_scripted_models_debug_regenerate_and_integrity(evaluator: Evaluator, suite: Path, tmp_path: Path) -> None:
    loaded = load_suite(suite)
    factor_only = load_suite(suite)
    factor_only.manifest.entries = [e for e in loaded.entries if e.id == "scale/factor"]
    common = {"options": FAST, "evaluator": evaluator, "probes": False}
    debug = run_bench(
        factor_only, strategy="debug", model="scripted", out=tmp_path / "d", model_factory=scripted_fix, **common
    )
    (row,) = debug.rows
    assert row.outcome == "repaired" and row.passed and row.tokens > 0 and row.iterations == 1
    assert row.sandbox is not None and row.sandbox.level == sandbox_level()

    regen = run_bench(
        factor_only,
        strategy="regenerate",
        model="scripted",
        out=tmp_path / "r",
        samples=2,
        model_factory=scripted_good_file,
        **common,
    )
    assert [r.outcome for r in regen.rows] == ["pass", "pass"] and all(r.tokens > 0 for r in regen.rows)
    (metrics,) = [m for m in compute(regen.rows, k=2) if m.label == "all"]
    assert metrics.pass_at_k == 1.0 and metrics.tokens_per_success == metrics.mean_tokens_per_success

    cheat = run_bench(
        factor_only,
        strategy="regenerate",
        model="cheat",
        out=tmp_path / "c",
        arms=["none", "integrity"],
        model_factory=scripted_cheat,
        **common,
    )
    rows = {r.arm: r for r in cheat.rows}
    assert rows["none"].outcome == "reject" and rows["none"].integrity_rejected and not rows["none"].accepted
    gates_off = rows["integrity"]
    assert gates_off.accepted and not gates_off.passed and gates_off.integrity_rejected and gates_off.check_s > 0


def test_replayed_model_from_a_spec(evaluator: Evaluator, suite: Path, tmp_path: Path) -> None:
    recording = tmp_path / "replay.jsonl"
    recording.write_text(Exchange(messages=[], reply=Reply(text=FIX)).model_dump_json() + "\n")
    loaded = load_suite(suite)
    loaded.manifest.entries = [e for e in loaded.entries if e.id == "scale/factor"]
    summary = run_bench(
        loaded,
        strategy="debug",
        model=f"replay:{recording}",
        out=tmp_path / "out",
        options=FAST,
        evaluator=evaluator,
        probes=False,
    )
    (row,) = summary.rows
    assert row.outcome == "repaired" and row.passed and row.model == f"replay:{recording}"


def test_worker_processes(evaluator: Evaluator, suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = run_bench(
        load_suite(suite),
        strategy="debug",
        model="offline",
        out=out,
        arms=["kb"],
        workers=2,
        options=FAST,
        cache_dir=evaluator.cache.root,
    )
    assert summary.ran == 2 and {r.case for r in summary.rows} == {"scale/grid", "scale/factor"}
    for row in summary.rows:
        assert row.outcome == "unrepaired" and row.stop_reason == "model-exhausted" and row.arm == "kb"
        assert row.hypotheses == [] and not row.passed
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert runs[-1]["workers"] == 2 and runs[-1]["ran"] == 2 and runs[-1]["machine"]["cpus"]


def test_unreadable_rows_are_skipped(tmp_path: Path) -> None:
    row = Attempt(case="c", label="l", task="t", strategy="debug", arm="none", sample=0, model="m", outcome="repaired")
    (tmp_path / "attempts.jsonl").write_text(row.model_dump_json() + "\n{truncated\n")
    assert read_attempts(tmp_path) == [row]


def test_memory_arms_share_a_store_in_the_results(evaluator: Evaluator, suite: Path, tmp_path: Path) -> None:
    from kope.bench.harness import MEMORY_DB, MEMORY_NOTE
    from kope.memory.store import ExperienceStore

    loaded = load_suite(suite)
    plain = run_bench(
        loaded,
        strategy="debug",
        model="offline",
        out=tmp_path / "plain",
        arms=["none", "memory"],
        limit=1,
        options=FAST,
        evaluator=evaluator,
        probes=False,
    )
    assert {r.arm: r.note for r in plain.rows}["memory"] == MEMORY_NOTE
    assert not (tmp_path / "plain" / MEMORY_DB).exists()

    out = tmp_path / "with-memory"
    remembered = run_bench(
        loaded,
        strategy="debug",
        model="offline",
        out=out,
        arms=["none", "memory"],
        limit=1,
        options=FAST,
        evaluator=evaluator,
        probes=False,
        memory=True,
    )
    rows = {r.arm: r for r in remembered.rows}
    assert rows["none"].passed and rows["memory"].passed and rows["memory"].note == ""
    store = ExperienceStore.open(out / MEMORY_DB)
    try:
        runs = store.runs()
        assert len(runs) == 1 and runs[0].kind == "debug", "only the arm with memory records its trajectory"
        assert store.stats().pattern_evidence >= 1, "the successful repair adds evidence to its pattern"
    finally:
        store.close()
    assert json.loads((out / "runs.jsonl").read_text().splitlines()[-1])["memory"] is True
