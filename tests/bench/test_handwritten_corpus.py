"""The hand-written held-out near-miss corpus (src/kope/corpora/handwritten/): its manifest is sound.

No evaluation here (benchmarks/verify_corpus.py runs and checks every entry, and its table is in
docs/guide/near-miss-corpora.md); this only guards the manifest against rot: files and tasks exist and parse,
labels are taxonomy ids, the corpus keeps its size, operator spread and style coverage.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from kope.bench.corpus import load_suite
from kope.knowledge.base import KnowledgeBase
from kope.ops import list_ops

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "src" / "kope" / "corpora" / "handwritten"
MANIFEST = CORPUS / "manifest.json"
STYLES = {
    "helper-functions",
    "autotune",
    "two-kernel",
    "stride-args",
    "cumsum-reduce",
    "2d-block",
    "init-params",
    "cdiv-launch",
    "meta-lambda",
}
KEYS = {"file", "op", "task", "label", "description", "line", "style", "needs", "expect"}


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    data = json.loads(MANIFEST.read_text())
    assert isinstance(data, list)
    return data


def _verify_corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_corpus", ROOT / "benchmarks" / "verify_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _defines(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}


def test_entries_are_well_formed(entries: list[dict]) -> None:
    ops = {o.name for o in list_ops()}
    labels = set(KnowledgeBase.load(include_user=False).patterns)
    files = [e["file"] for e in entries]
    assert len(files) == len(set(files)), "each file once"
    for entry in entries:
        assert set(entry) <= KEYS and {"file", "label", "description", "line", "style"} <= set(entry), entry
        assert ("op" in entry) != ("task" in entry), entry["file"]
        assert "op" not in entry or entry["op"] in ops, entry["file"]
        assert entry["label"] in labels, (entry["file"], entry["label"])
        assert entry["style"] and set(entry["style"]) <= STYLES, entry["file"]
        assert entry.get("needs", "autotune") == "autotune"
        source = (CORPUS / entry["file"]).read_text()
        tree = ast.parse(source)
        assert "ModelNew" in _defines(tree), entry["file"]
        assert 1 <= entry["line"] <= len(source.splitlines()), entry["file"]
        assert ("needs" in entry) == ("triton.autotune" in source), entry["file"]
        assert ("autotune" in entry["style"]) == ("triton.autotune" in source), entry["file"]
        if "task" in entry:
            task = ast.parse((CORPUS / entry["task"]).read_text())
            assert {"Model", "get_inputs", "get_init_inputs"} <= _defines(task), entry["task"]


def test_corpus_size_spread_and_styles(entries: list[dict]) -> None:
    assert len(entries) >= 44
    assert len({e.get("op") or e.get("task") for e in entries}) >= 16
    styles = Counter(tag for e in entries for tag in e["style"])
    assert set(styles) == STYLES and min(styles.values()) >= 3, styles
    assert len({e["label"] for e in entries}) >= 12


def test_autotune_entries_have_a_runnable_form_without_the_decorator(entries: list[dict]) -> None:
    without_autotune = _verify_corpus().without_autotune
    autotuned = [e for e in entries if e.get("needs") == "autotune"]
    assert len(autotuned) >= 3
    for entry in autotuned:
        plain = without_autotune((CORPUS / entry["file"]).read_text())
        tree = ast.parse(plain)
        assert "triton.autotune" not in plain
        launches = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name)
        ]
        assert launches and all(any(k.arg and k.arg.isupper() for k in n.keywords) for n in launches), entry["file"]


def test_kope_loads_it_as_a_near_miss_suite(entries: list[dict]) -> None:
    suite = load_suite(MANIFEST)
    assert [e.candidate for e in suite.manifest.entries] == [e["file"] for e in entries]
    for entry in suite.manifest.entries:
        if not entry.task.startswith("op:"):
            assert (suite.root / entry.task).is_file(), entry.task
