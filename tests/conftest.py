"""Shared fixtures: paths to test kernels and one evaluator (one fork server) per test session."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kope.device import cuda_present
from kope.evaluate import EvalOptions, Evaluator

FIXTURES = Path(__file__).parent / "fixtures"
CORPORA = Path(__file__).parents[1] / "src" / "kope" / "corpora"
"""Every near-miss corpus (see its README); `fixtures` is the tests' own."""
NEAR_MISS = CORPORA / "fixtures"
SCALE_TASK = FIXTURES / "tasks" / "scale.py"
SCALE_GOOD = FIXTURES / "good" / "scale.py"
HOSTILE = FIXTURES / "hostile"
TAXONOMY: tuple[str, ...] = (
    "missing-mask",
    "mask-off-by-one",
    "padding-in-reduction",
    "grid-too-small",
    "loop-bound",
    "wrong-stride",
    "index-shift",
    "wrong-normalizer",
    "wrong-constant",
    "missing-atomic",
    "precision-loss",
    "numerical-instability",
    "wrong-epsilon",
    "accumulator-reset",
    "broadcast-error",
    "wrong-reduction-init",
    "dtype-mismatch",
    "missing-batch-offset",
    "uninitialized-output",
    "api-misuse",
)
"""The bug taxonomy's stable ids (DESIGN.md), written out here so that the tests do not read them from kope."""


@functools.cache
def sandbox_level() -> str:
    """The level `--sandbox auto` gets on this machine, measured once (as `kope doctor` does)."""
    from kope.evaluate.doctor import trial

    report = trial("auto")
    return report.level if report is not None else "process"


HEAVY_FIXTURES = frozenset({"evaluator", "provenance_evaluator", "ray_executor"})
"""Fixtures that start sandboxed evaluations (a fork server, a Ray cluster): what makes a test slow here."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="the fast tier: leave out tests marked slow and those that use an evaluator fixture, except the "
        "smoke tests (a few end-to-end checks kept on purpose); `scripts/test.sh --fast`",
    )


def in_fast_tier(item: pytest.Item) -> bool:
    if item.get_closest_marker("smoke") is not None:
        return True
    heavy = HEAVY_FIXTURES.intersection(getattr(item, "fixturenames", ()))
    return not heavy and item.get_closest_marker("slow") is None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--fast"):
        kept = [item for item in items if in_fast_tier(item)]
        config.hook.pytest_deselected(items=[item for item in items if not in_fast_tier(item)])
        items[:] = kept
    if cuda_present():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def evaluator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evaluator]:
    with Evaluator(cache_dir=tmp_path_factory.mktemp("reference-cache")) as shared:
        yield shared


@pytest.fixture
def fast() -> EvalOptions:
    """One trial per case and short limits: enough for behaviour tests."""
    return EvalOptions(trials=1, timeout_s=20, memory_mb=2048)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A scratch directory holding a copy of the scale task and its good kernel."""
    shutil.copy(SCALE_TASK, tmp_path / "task.py")
    shutil.copy(SCALE_GOOD, tmp_path / "good.py")
    return tmp_path


def verdicts(evaluator: Evaluator, task: Path, texts: list[str], tmp_path: Path) -> list[str]:
    """The status of each candidate text on the task's visible cases (one trial each)."""
    options = EvalOptions(trials=1, timeout_s=60, memory_mb=2048)
    found = []
    for text in texts:
        path = tmp_path / f"version{len(found)}.py"
        path.write_text(text)
        found.append(evaluator.evaluate(task, path, options=options, which="visible").status)
    return found


def offline_repair(
    evaluator: Evaluator, tmp_path: Path, task: str, candidate: str, max_evaluations: int
) -> tuple[str, str, list[str]]:
    """`kope debug`'s offline loop (no probes, the search bounded to `max_evaluations` a round) on a task and a
    candidate given as text: the status, the returned kernel's text and the operators of the accepted edits."""
    from kope.agents import DebugConfig, DebugLoop
    from kope.repair.search import SearchConfig

    task_path, candidate_path = tmp_path / "task.py", tmp_path / "candidate.py"
    task_path.write_text(task)
    candidate_path.write_text(candidate)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=max_evaluations))
    report = DebugLoop(None, evaluator, config=config).run(task_path, candidate_path, tmp_path / "fixed.py")
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    return report.status, (tmp_path / "fixed.py").read_text(), accepted
