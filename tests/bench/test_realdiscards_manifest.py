"""The real-discard set's manifest and provenance (benchmarks/realdiscards) agree and keep their rules."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

from kope.triage.layout import match

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "realdiscards"
COLUMNS = ["task", "candidate", "id", "model", "source", "source_verdict", "split", "module_mode"]
FORBIDDEN = {"PaliC/KernelBench", "adityakotha03/tritonLLM"}


def _rows(name: str) -> list[dict[str, str]]:
    with (ROOT / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_manifest_columns_and_ids() -> None:
    with (ROOT / "manifest.csv").open(newline="") as handle:
        assert next(csv.reader(handle)) == COLUMNS
    rows = _rows("manifest.csv")
    assert len(rows) >= 100
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["model"] for r in rows}) >= 3
    assert {r["source_verdict"] for r in rows} <= {"pass", "fail", "error", "unknown"}
    assert {(r["source"], r["module_mode"]) for r in rows} == {  # SOURCES.md: the mode each pipeline ran models in
        ("Alisehen/LLMKernel", "eval"),
        ("DeepLink-org/DLBlas", "train"),
    }
    for r in rows:
        assert r["candidate"] == f"candidates/{r['id']}.py"
        assert re.fullmatch(r"v0(\.\d)?/level[123]/\d+_[^/]+\.py", r["task"]), r["task"]


def test_split_is_by_problem_and_about_a_third_held_out() -> None:
    rows = _rows("manifest.csv")
    provenance = {p["id"]: p for p in _rows("provenance.csv")}
    splits: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        p = provenance[r["id"]]
        splits[(p["level"], p["problem"])].add(r["split"])
    assert all(len(s) == 1 for s in splits.values()), "a problem in both splits"
    held = sum(s == {"heldout"} for s in splits.values())
    assert held == round(len(splits) / 3)


def test_every_candidate_has_its_provenance() -> None:
    rows = _rows("manifest.csv")
    provenance = {p["id"]: p for p in _rows("provenance.csv")}
    assert set(provenance) == {r["id"] for r in rows}
    for r in rows:
        p = provenance[r["id"]]
        assert p["repo"] == r["source"] and p["repo"] not in FORBIDDEN
        assert re.fullmatch(r"[0-9a-f]{40}", p["commit"]) and re.fullmatch(r"[0-9a-f]{40}", p["kernelbench_commit"])
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"]) and re.fullmatch(r"[0-9a-f]{64}", p["task_sha256"])
        assert p["licence"] in {"MIT", "BSD-3-Clause", "Apache-2.0"}
        assert r["task"].startswith(p["kernelbench"] + "/level" + p["level"] + "/")


def test_kope_reads_the_manifest(tmp_path: Path) -> None:
    """kope's manifest layout takes the extra columns: every row matched where the files are materialized,
    else every row unmatched with its reason."""
    rows = _rows("manifest.csv")
    if (ROOT / "tasks").is_dir():
        matching = match(ROOT / "tasks", ROOT / "manifest.csv")
        assert not matching.unmatched
        assert sorted(i.id for i in matching.items) == sorted(r["id"] for r in rows)
        return
    (tmp_path / "tasks").mkdir()
    matching = match(tmp_path / "tasks", ROOT / "manifest.csv")
    assert matching.layout == "manifest" and not matching.items
    assert len(matching.unmatched) == len(rows)
    assert all(u.reason.startswith("no task file") for u in matching.unmatched)
