"""The default suite is its manifest: candidates remade from (kernel, operator, site) match the recorded hashes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kope.bench.corpus import SuiteEntry, default_suite_dir, load_suite
from kope.bench.reproduce import ReproductionError, materialise
from kope.hashing import content_hash


def _one_per_operator(entries: list[SuiteEntry]) -> list[SuiteEntry]:
    chosen: dict[str, SuiteEntry] = {}
    for entry in entries:
        chosen.setdefault(str(entry.operator), entry)
    return list(chosen.values())


def test_shipped_suite_is_a_manifest_only() -> None:
    root = default_suite_dir()
    assert sorted(p.name for p in root.iterdir()) == ["manifest.json"]
    suite = load_suite("default")
    assert len(suite.entries) == 209
    assert all(e.sha256 and e.operator and e.site is not None and e.task.startswith("op:") for e in suite.entries)


@pytest.mark.slow
def test_remade_candidates_match_the_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One entry per mutation operator (22 of the 209), remade through `load_suite("default")` into a fresh cache.

    All 209: benchmarks/verify_suite.py (about 20 s, too slow for the suite's time budget).
    """
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    suite = load_suite("default")
    assert suite.remade is not None and tmp_path in suite.remade.parents
    sample = _one_per_operator(suite.entries)
    assert len(sample) == 22
    for entry in sample:
        path = suite.candidate_path(entry)
        assert suite.remade in path.parents and path.name == Path(entry.candidate).name
        assert content_hash(path.read_text()) == entry.sha256, entry.id
    assert not list(suite.remade.rglob("*.tmp")), "writes are atomic: no temporary file is left behind"


def test_a_cached_file_is_reused_and_a_corrupted_one_remade(tmp_path: Path) -> None:
    entry = load_suite("default").entries[0]
    assert entry.operator is not None and entry.site is not None and entry.sha256 is not None
    target = tmp_path / "relu" / "candidate.py"
    materialise(entry.task[3:], entry.operator, entry.site, entry.sha256, target)
    stamp = target.stat().st_mtime_ns
    materialise(entry.task[3:], entry.operator, entry.site, entry.sha256, target)
    assert target.stat().st_mtime_ns == stamp, "a matching file is not rewritten"
    target.write_text("# tampered\n")
    materialise(entry.task[3:], entry.operator, entry.site, entry.sha256, target)
    assert content_hash(target.read_text()) == entry.sha256


def test_a_recipe_that_no_longer_reproduces_fails_loudly(tmp_path: Path) -> None:
    entry = load_suite("default").entries[0]
    assert entry.operator is not None and entry.site is not None
    with pytest.raises(ReproductionError, match="differs from the suite's recorded file"):
        materialise(entry.task[3:], entry.operator, entry.site, "0" * 64, tmp_path / "x.py")
    assert not (tmp_path / "x.py").exists()
    with pytest.raises(ReproductionError, match="cannot remake"):
        materialise(entry.task[3:], entry.operator, 10_000, "0" * 64, tmp_path / "x.py")


def test_a_suites_own_file_wins_and_list_manifests_are_never_remade(tmp_path: Path) -> None:
    suite = load_suite("default")
    entry = suite.entries[0]
    own = dataclasses.replace(suite, root=tmp_path)
    (tmp_path / entry.candidate).parent.mkdir(parents=True)
    (tmp_path / entry.candidate).write_text("# the suite's own copy\n")
    assert own.candidate_path(entry) == tmp_path / entry.candidate
    listed = load_suite(Path(__file__).resolve().parents[2] / "src" / "kope" / "corpora" / "fixtures")
    assert listed.remade is None
