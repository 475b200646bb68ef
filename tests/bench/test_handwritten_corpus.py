"""The hand-written near-miss corpora (corpora/handwritten/ to handwritten7/): their manifests are sound.

No evaluation here (benchmarks/verify_corpus.py runs and checks every entry, and its tables are in
docs/guide/near-miss-corpora.md); this only guards the manifests against rot: files and tasks exist and parse,
labels are taxonomy ids, each corpus keeps its size, operator and label spread and style coverage.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from kope.bench.corpus import load_suite
from kope.knowledge.base import KnowledgeBase
from kope.ops import list_ops

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "src" / "kope" / "corpora"
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


@dataclass(frozen=True)
class Spec:
    """What one corpus promises: its size and spread, and how its autotuned entries are marked."""

    name: str
    min_entries: int
    min_operators: int
    min_labels: int
    max_per_label: int | None
    max_kope_ops: int | None
    needs_autotune_marker: bool
    """The first corpus was written before `@triton.autotune` ran on the CPU interpreter: its autotuned
    entries carry `"needs": "autotune"` (verify_corpus.py shims them). The second was written after:
    its autotuned entries run as written and carry no marker, and so do the third's."""


SPECS = [
    Spec("handwritten", 44, 16, 12, None, None, needs_autotune_marker=True),
    Spec("handwritten2", 42, 15, 12, 6, 4, needs_autotune_marker=False),
    Spec("handwritten3", 40, 16, 14, 5, 0, needs_autotune_marker=False),
    Spec("handwritten4", 40, 16, 14, 5, 0, needs_autotune_marker=False),
    Spec("handwritten5", 40, 16, 14, 5, 0, needs_autotune_marker=False),
    Spec("handwritten6", 40, 16, 14, 5, 0, needs_autotune_marker=False),
    Spec("handwritten7", 40, 16, 14, 5, 0, needs_autotune_marker=False),
]
NEW_TASK_CORPORA = ["handwritten2", "handwritten3", "handwritten4", "handwritten5", "handwritten6", "handwritten7"]
"""The corpora whose tasks are all new: other operators than the earlier corpora's tasks and kope's ops."""


def _task_names(name: str) -> set[str]:
    return {p.name for p in (CORPORA / name / "tasks").iterdir() if p.is_dir()}


@pytest.fixture(scope="module", params=SPECS, ids=lambda s: s.name)
def corpus(request: pytest.FixtureRequest) -> tuple[Spec, Path, list[dict]]:
    spec: Spec = request.param
    root = CORPORA / spec.name
    data = json.loads((root / "manifest.json").read_text())
    assert isinstance(data, list)
    return spec, root, data


def _verify_corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_corpus", ROOT / "benchmarks" / "verify_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _defines(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}


def test_entries_are_well_formed(corpus: tuple[Spec, Path, list[dict]]) -> None:
    spec, root, entries = corpus
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
        source = (root / entry["file"]).read_text()
        tree = ast.parse(source)
        assert "ModelNew" in _defines(tree), entry["file"]
        assert 1 <= entry["line"] <= len(source.splitlines()), entry["file"]
        if spec.needs_autotune_marker:
            assert ("needs" in entry) == ("triton.autotune" in source), entry["file"]
        else:
            assert "needs" not in entry, entry["file"]
        assert ("autotune" in entry["style"]) == ("triton.autotune" in source), entry["file"]
        if "task" in entry:
            task = ast.parse((root / entry["task"]).read_text())
            assert {"Model", "get_inputs", "get_init_inputs"} <= _defines(task), entry["task"]


def test_corpus_size_spread_and_styles(corpus: tuple[Spec, Path, list[dict]]) -> None:
    spec, _, entries = corpus
    assert len(entries) >= spec.min_entries
    assert len({e.get("op") or e.get("task") for e in entries}) >= spec.min_operators
    styles = Counter(tag for e in entries for tag in e["style"])
    assert set(styles) == STYLES and min(styles.values()) >= 3, styles
    labels = Counter(e["label"] for e in entries)
    assert len(labels) >= spec.min_labels
    if spec.max_per_label is not None:
        assert max(labels.values()) <= spec.max_per_label, labels
    if spec.max_kope_ops is not None:
        assert len({e["op"] for e in entries if "op" in e}) <= spec.max_kope_ops


@pytest.mark.parametrize("name", NEW_TASK_CORPORA)
def test_the_later_corpora_have_new_tasks_with_hidden_cases(name: str) -> None:
    """handwritten2's and handwritten3's tasks are other operators than every earlier corpus's tasks and than
    kope's ops, each with 3-4 cases (the first visible)."""
    earlier = ["handwritten", *NEW_TASK_CORPORA[: NEW_TASK_CORPORA.index(name)]]
    tasks = _task_names(name)
    assert len(tasks) >= 15
    for other in earlier:
        assert not tasks & _task_names(other), other
    assert not tasks & {o.name for o in list_ops()}
    for task in tasks:
        tree = ast.parse((CORPORA / name / "tasks" / task / "task.py").read_text())
        get_cases = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_cases")
        returned = next(n for n in ast.walk(get_cases) if isinstance(n, ast.Return))
        assert isinstance(returned.value, ast.List) and 3 <= len(returned.value.elts) <= 4, task


def test_autotune_entries_have_a_runnable_form_without_the_decorator(corpus: tuple[Spec, Path, list[dict]]) -> None:
    spec, root, entries = corpus
    without_autotune = _verify_corpus().without_autotune
    autotuned = [e for e in entries if "autotune" in e["style"]]
    assert len(autotuned) >= 3
    if spec.needs_autotune_marker:
        assert autotuned == [e for e in entries if e.get("needs") == "autotune"]
    for entry in autotuned:
        plain = without_autotune((root / entry["file"]).read_text())
        tree = ast.parse(plain)
        assert "triton.autotune" not in plain
        launches = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name)
        ]
        assert launches and all(any(k.arg and k.arg.isupper() for k in n.keywords) for n in launches), entry["file"]


def test_kope_loads_it_as_a_near_miss_suite(corpus: tuple[Spec, Path, list[dict]]) -> None:
    _, root, entries = corpus
    suite = load_suite(root / "manifest.json")
    assert [e.candidate for e in suite.manifest.entries] == [e["file"] for e in entries]
    for entry in suite.manifest.entries:
        if not entry.task.startswith("op:"):
            assert (suite.root / entry.task).is_file(), entry.task


def test_verify_corpus_writes_its_table_as_markdown_with_whole_file_names() -> None:
    module = _verify_corpus()
    long_name = "a_rather_long_near_miss_file_name_that_a_narrow_console_would_cut_short.py"
    rows = [
        module.Row(long_name, "wrong-stride", "fail", "", 12, False, 0.5, True, False),
        module.Row("b.py", "loop-bound", "pass", "", 0, False, 0.4, False, True),
    ]
    text = module.markdown(rows, ROOT / "src" / "kope" / "corpora" / "x" / "manifest.json", "2 entries")
    lines = text.splitlines()
    assert lines[0] == "# Verified: `src/kope/corpora/x/manifest.json`"
    assert f"| `{long_name}` | wrong-stride | fail | - | 12 | passes | 0.5 | yes |" in lines
    assert "| `b.py` (shim) | loop-bound | pass | - | 0 | passes | 0.4 | NO |" in lines
    assert lines[-1] == "2 entries"
