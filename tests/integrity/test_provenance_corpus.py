"""The held-out provenance corpora of issue 12: every cheat is rejected with an acceptable rule, no honest kernel is.

The corpora under tests/fixtures/provenance/ were written independently of the provenance gates and are never
used to tune them (docs/results/integrity-corpora.md). Fixtures marked `"needs": "cpp"` build a CPU C++ extension
with torch.utils.cpp_extension.load_inline and are skipped where no C++ compiler is found.
"""

from __future__ import annotations

import json
import shutil
import sysconfig
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import FIXTURES

from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import EvalResult

ROOT = FIXTURES.parents[1]
CORPUS = FIXTURES / "provenance"
CHEATS: list[dict[str, Any]] = json.loads((CORPUS / "cheats" / "manifest.json").read_text())
HONEST: list[dict[str, Any]] = json.loads((CORPUS / "honest" / "manifest.json").read_text())
OPTIONS = EvalOptions(trials=2)
CPP_OPTIONS = EvalOptions(trials=2, timeout_s=300)
"""Building an extension inside the sandbox takes one to three minutes on a 2-core machine."""
RULES = {"host-compute", "copy-kernel", "torch-compute", "kernel-not-launched"}
CHEAT_FAMILIES = {
    "host-compute-copy",
    "init-tables",
    "torch-copy",
    "constant-kernels",
    "bytes-rebuilt",
    "extension-callback",
    "partial-cheats",
}


def _compiler() -> str | None:
    configured = (sysconfig.get_config_var("CXX") or "").split()
    for name in [*configured[:1], "c++", "g++", "clang++"]:
        if name and shutil.which(name):
            return name
    return None


def _params(entries: list[dict[str, Any]]) -> list[Any]:
    """One parameter per fixture; `known_miss` (measured on the held-out corpus, not tuned away) is a strict
    xfail, so a fix that catches it must also update the manifest."""
    cpp = pytest.mark.skipif(_compiler() is None, reason="builds a C++ extension and no C++ compiler was found")
    params = []
    for entry in entries:
        marks = [cpp] if entry.get("needs") == "cpp" else []
        if entry.get("known_miss"):
            marks.append(pytest.mark.xfail(strict=True, reason=entry["known_miss"]))
        params.append(pytest.param(entry, id=entry["file"], marks=marks))
    return params


@pytest.fixture(scope="module")
def provenance_evaluator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evaluator]:
    with Evaluator(cache_dir=tmp_path_factory.mktemp("provenance-reference-cache")) as shared:
        yield shared


def _evaluate(evaluator: Evaluator, entry: dict[str, Any], folder: str) -> EvalResult:
    """C++ fixtures build their extension in every job (a minute or more here): the visible case only."""
    if entry.get("needs") == "cpp":
        return evaluator.evaluate(ROOT / entry["task"], CORPUS / folder / entry["file"], options=CPP_OPTIONS,
                                  which="visible")  # fmt: skip
    return evaluator.evaluate(ROOT / entry["task"], CORPUS / folder / entry["file"], options=OPTIONS)


def _summary(result: EvalResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "error": result.error.model_dump() if result.error else None,
        "findings": [f.model_dump() for f in result.integrity.findings],
        "policy": getattr(result.integrity, "policy", None),
    }


def test_manifests_are_complete() -> None:
    assert len(CHEATS) >= 22
    assert len(HONEST) >= 32
    families: dict[str, int] = {}
    for entry in CHEATS:
        assert (CORPUS / "cheats" / entry["file"]).is_file(), entry["file"]
        assert (ROOT / entry["task"]).is_file(), entry["task"]
        assert entry["rules"] and set(entry["rules"]) <= RULES, entry
        families[entry["family"]] = families.get(entry["family"], 0) + 1
    assert set(families) == CHEAT_FAMILIES
    assert min(families.values()) >= 3, families
    for entry in HONEST:
        assert (CORPUS / "honest" / entry["file"]).is_file(), entry["file"]
        assert (ROOT / entry["task"]).is_file(), entry["task"]
        assert entry["policy"] in ("strict", "partial", None), entry
    level2 = [e for e in HONEST if e["style"] == "level2-partial"]
    assert len(level2) >= 8
    partial_tasks = {e["task"] for e in CHEATS if e["family"] == "partial-cheats"}
    assert {e["task"] for e in level2} <= partial_tasks


@pytest.mark.slow
@pytest.mark.parametrize("entry", _params(CHEATS))
def test_cheat_is_rejected_with_an_acceptable_rule(provenance_evaluator: Evaluator, entry: dict[str, Any]) -> None:
    result = _evaluate(provenance_evaluator, entry, "cheats")
    summary = _summary(result)
    assert result.status in ("pass", "reject"), summary
    assert all(case.passed for case in result.cases), summary
    assert result.integrity.verdict == "reject", summary
    fired = {f.rule for f in result.integrity.findings if f.severity == "reject"}
    assert fired & set(entry["rules"]), (entry["rules"], summary)
    if entry["family"] == "partial-cheats":
        assert getattr(result.integrity, "policy", None) == "partial", summary


@pytest.mark.slow
@pytest.mark.parametrize("entry", _params(HONEST))
def test_honest_kernel_passes(provenance_evaluator: Evaluator, entry: dict[str, Any]) -> None:
    result = _evaluate(provenance_evaluator, entry, "honest")
    summary = _summary(result)
    rejects = [f for f in result.integrity.findings if f.severity == "reject"]
    assert rejects == [], summary
    assert result.status == "pass", summary
    if entry["policy"] is not None:
        assert getattr(result.integrity, "policy", None) == entry["policy"], summary
