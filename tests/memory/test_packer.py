"""The experience packer: exact budget, relevant and useful items first, redundancy paid once, logged."""

from __future__ import annotations

from pathlib import Path

import pytest

from kope.agents.prompts import StepContext, build
from kope.cases.task import load_task
from kope.context.budget import Section
from kope.memory import DecisionIn, ExperienceStore
from kope.memory.packer import ExperiencePacker, Query, render_block
from kope.models.tokens import count, count_messages
from kope.ops import get_op
from kope.protocol.results import CaseResult, EvalResult, Timing


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


def trajectory(store: ExperienceStore, op: str, decisions: list[tuple[str, float, str]]) -> int:
    """One optimize run on `op`: each decision (text, child time, status) from the start (time 100)."""
    info = get_op(op)
    task = store.ensure_task(load_task(info.task_path))
    run = store.start_run("optimize", task.id, model="scripted", device="cpu-interpreter")
    start = store.record_step(run.id, task.id, f"# {op}\nstart = 1\n", result=timed(100.0))
    for index, (text, ms, status) in enumerate(decisions):
        store.record_step(
            run.id,
            task.id,
            f"# {op}\nv = {index}\n",
            parent_id=start.version.id,
            made=DecisionIn(kind="edit", text=text, diff=f"-old {index}\n+new {index} " + text * 3),
            result=timed(ms, status),
        )
    return run.id


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with ExperienceStore.open(tmp_path / "memory.db") as opened:
        trajectory(
            opened,
            "gelu_tanh",
            [("vectorise loads with a larger BLOCK", 50.0, "pass"), ("unroll the inner loop", 120.0, "pass")],
        )
        trajectory(
            opened,
            "matmul",
            [("swizzle program ids for L2 reuse in tiles", 60.0, "pass"), ("use tf32 dot products", 40.0, "fail")],
        )
        for index in range(6):
            trajectory(opened, "row_sum", [(f"same lesson again number {index}: larger BLOCK", 90.0, "pass")])
        yield opened


def query_for(store: ExperienceStore, op: str) -> Query:
    task = store.ensure_task(load_task(get_op(op).task_path))
    return Query(
        purpose="optimize",
        family=task.family,
        signature=task.signature,
        device="cpu-interpreter",
        task_id=task.id,
        text="BLOCK vectorise loads elementwise",
    )


def test_never_exceeds_the_budget_exactly(store: ExperienceStore) -> None:
    packer = ExperiencePacker(store)
    query = query_for(store, "relu")
    full = count(render_block([(s, s.levels[0]) for s in packer.prepare(query).sections]))
    for budget in (0, 1, 17, 40, 90, 200, full - 1, full, full + 50):
        packed, _ = packer.pack_alone(query, budget)
        assert packed.tokens <= budget
        assert packed.tokens == (count(render_block(packed.sections)) if packed.sections else 0)
    generous, _ = packer.pack_alone(query, full + 50)
    assert generous.dropped == [] and generous.reduced == []
    tight, _ = packer.pack_alone(query, 120)
    assert tight.reduced or tight.dropped, "a small budget renders items shorter or leaves them out"


def test_experience_in_a_real_prompt_stays_within_budget(store: ExperienceStore) -> None:
    packer = ExperiencePacker(store)
    prepared = packer.prepare(query_for(store, "relu"))
    context = StepContext(reference="ref = 1\n" * 40, kernel="x = 1\n" * 60, experience=prepared.sections)
    for budget in (1200, 1400, 2000, 6000):
        messages, packed = build(context, budget)
        assert count_messages(messages) == packed.tokens <= budget
        assert all(isinstance(s, Section) for s, _ in packed.sections)
    messages, _ = build(context, 6000)
    assert messages[1].content.count("## Experience from earlier runs") == 1, "items share one heading"


def test_prefers_relevant_and_useful_items(store: ExperienceStore) -> None:
    packer = ExperiencePacker(store)
    ranked = packer.rank(query_for(store, "relu"), packer.items(query_for(store, "relu")))
    texts = [entry.item.levels[2] for entry in ranked]
    assert "vectorise loads" in texts[0], "same family, 2x faster, words in common: first"
    position = {key: index for index, key in enumerate(texts)}
    faster = next(i for t, i in position.items() if "vectorise" in t)
    slower = next(i for t, i in position.items() if "unroll" in t)
    failed = next(i for t, i in position.items() if "tf32" in t)
    assert faster < slower and faster < failed
    repeats = [i for t, i in position.items() if "same lesson" in t]
    assert len(repeats) == 6 and sorted(repeats)[1] > failed, "a repeated lesson is paid for once"
    redundancies = [entry.redundancy for entry in ranked if "same lesson" in entry.item.levels[2]]
    assert max(redundancies) > 0.5


def test_logs_what_it_injected(store: ExperienceStore) -> None:
    packer = ExperiencePacker(store)
    query = query_for(store, "relu")
    packed, prepared = packer.pack_alone(query, 150)
    items = packer.log(prepared, packed)
    logged = store.injections(prepared.prompt_id)
    assert [i.item for i in logged] == [i.item for i in items] and logged
    assert sum(i.tokens for i in logged) <= 150
    assert all(0 <= i.relevance <= 1 and 0 <= i.utility <= 1 for i in logged)
    evidence = packer.evidence(prepared, items)
    assert all(key.startswith("decision:") and isinstance(version, int) for key, version in evidence.items())
