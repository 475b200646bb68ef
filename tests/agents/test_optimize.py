"""The optimize loop: launch-parameter search offline, scripted LLM edits, memory seeding, recording."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK

from kope.agents.launch import apply_config, find_knobs
from kope.agents.optimize import (
    Node,
    OptimizeConfig,
    OptimizeLoop,
    OptimizeReport,
    Search,
    _Open,
    launch_memory,
)
from kope.agents.proposers import Frontier, LaunchSearch
from kope.cases.task import build_cases, load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.memory import DecisionIn, ExperienceStore
from kope.models.replay import ScriptedModel
from kope.ops import get_op

RELU = get_op("relu")
FAST = EvalOptions(trials=1, timing=True, timing_budget_ms=20, timeout_s=60, memory_mb=2048)


def test_knobs_are_found_and_rewritten() -> None:
    relu = RELU.kernel_path.read_text()
    knobs = {k.id: k for k in find_knobs(relu)}
    assert knobs["const:BLOCK"].value == 1024 and knobs["kw:num_warps"].value == 4
    rewritten = apply_config(relu, {"const:BLOCK": 4096, "kw:num_stages": 2, "cap:nothing": 3})
    assert "BLOCK = 4096" in rewritten and "num_stages=2" in rewritten and "num_warps=4" in rewritten
    matmul = {k.id: k for k in find_knobs(get_op("matmul").kernel_path.read_text())}
    assert (
        matmul["cap:block_m"].value == 128 and matmul["kw:GROUP_M"].value == 8 and matmul["kw:num_warps"].value is None
    )
    changed = apply_config(get_op("matmul").kernel_path.read_text(), {"cap:block_k": 32, "kw:num_warps": 2})
    assert "block_k = min(32," in changed and "num_warps=2" in changed
    scale = {k.id for k in find_knobs(SCALE_GOOD.read_text())}
    assert scale == {"kw:BLOCK", "kw:num_warps", "kw:num_stages"}
    assert find_knobs("x = 1\n") == [] and find_knobs("def (:") == []


def test_memory_seeds_and_orders_the_launch_search(tmp_path: Path) -> None:
    with ExperienceStore.open(tmp_path / "m.db") as store:
        gelu = store.ensure_task(load_task(get_op("gelu_tanh").task_path))
        run = store.start_run("optimize", gelu.id, model="offline", device="cpu-interpreter")
        start = store.record_step(run.id, gelu.id, "a = 1\n")
        store.record_step(
            run.id,
            gelu.id,
            "a = 2\n",
            parent_id=start.version.id,
            made=DecisionIn(kind="launch-config", params={"changes": {"const:BLOCK": [1024, 512]}}),
        )
        store.finish_run(
            run.id,
            status="improved",
            stop_reason="x",
            summary={"config": {"const:BLOCK": 4096}, "speedup_vs_start": 1.8},
        )
        relu = store.ensure_task(load_task(RELU.task_path))
        seeds, order = launch_memory(store, device="cpu-interpreter", family="elementwise", task_id=relu.id)
        assert seeds == [{"const:BLOCK": 4096}] and order == {}
        assert launch_memory(store, device="cuda:H100", family="elementwise", task_id=relu.id) == ([], {})
    source = RELU.kernel_path.read_text()
    search = LaunchSearch(source, interpreted=True, seeds=seeds, move_order={("const:BLOCK", "down"): 0.3})
    assert [k.id for k in search.knobs] == ["const:BLOCK"], "num_warps and num_stages do nothing in the interpreter"
    root = _Open(node=Node(index=0, kind="start", time_ms=1.0), source=source, config=dict(search.start))
    state = Search(task=load_task(RELU.task_path), start=root)
    first = search.propose(Frontier(root, state))
    assert first is not None and first.params is not None and first.params["seed"] is True
    assert first.source is not None and "BLOCK = 4096" in first.source
    second = search.propose(Frontier(root, state))
    assert second is not None and second.params is not None
    assert second.params["changes"] == {"const:BLOCK": [1024, 512]}, "the move the memory liked comes first"
    plain = LaunchSearch(source, interpreted=False)
    assert {k.id for k in plain.knobs} == {"const:BLOCK", "kw:num_warps", "kw:num_stages"}
    assert plain.moves(plain.start)[0] == {**plain.start, "const:BLOCK": 2048}, "without memory: block sizes up first"


@pytest.mark.slow
def test_offline_optimize_finds_a_configuration_and_records_it(evaluator: Evaluator, tmp_path: Path) -> None:
    task = load_task(RELU.task_path)
    cases = build_cases(task, [{"batch_size": 3, "dim": 700}, {"batch_size": 1, "dim": 1}])
    with ExperienceStore.open(tmp_path / "m.db") as store:
        loop = OptimizeLoop(
            None,
            evaluator,
            store=store,
            transcript=tmp_path / "t.jsonl",
            config=OptimizeConfig(iterations=3, options=FAST),
        )
        report = loop.run(task, RELU.kernel_path, tmp_path / "out.py", cases=cases)
        assert report.status in ("improved", "not-improved") and report.stop_reason == "iteration-limit"
        assert report.timing_method == "interpreter-wall" and report.speedup_vs_reference is None
        assert report.best_ms is not None and report.start_ms is not None and report.best_ms <= report.start_ms
        assert report.evaluations == 4 and len(report.trajectory) == 4
        assert [n.kind for n in report.trajectory] == ["start"] + ["launch-config"] * 3
        assert all(n.status == "pass" for n in report.trajectory)
        assert (tmp_path / "out.py").read_text().count("BLOCK = ") == 1
        run = store.get_run(report.run_id or 0)
        assert run is not None and run.kind == "optimize" and run.status == report.status and run.summary
        assert len(store.decisions(run_id=run.id)) == 3 and len(store.evaluations(run_id=run.id)) == 4
        assert len(store.edges(kind="derived_from", run_id=run.id)) == 3
        assert all(d.params and d.params["changes"] for d in store.decisions(run_id=run.id))


SLOWER = """Use a larger block so fewer programs are launched.
<<<<<<< SEARCH
    _scale_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
=======
    _scale_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
>>>>>>> REPLACE
"""
WRONG = """Halve the grid.
<<<<<<< SEARCH
    _scale_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
=======
    _scale_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=256)
>>>>>>> REPLACE
"""


@pytest.mark.slow
def test_model_optimize_records_decisions_and_uses_experience(evaluator: Evaluator, tmp_path: Path) -> None:
    config = OptimizeConfig(iterations=3, options=dataclasses.replace(FAST), prompt_budget=3000)
    with ExperienceStore.open(tmp_path / "m.db") as store:
        first = ScriptedModel([WRONG, "I have no idea.", SLOWER])
        report = OptimizeLoop(first, evaluator, store=store, config=config).run(
            SCALE_TASK, SCALE_GOOD, tmp_path / "a.py"
        )
        kinds = [n.kind for n in report.trajectory]
        assert kinds == ["start", "edit", "no-edit", "edit"] and report.evaluations == 3
        assert report.trajectory[1].status == "fail", "a wrong version is discarded, however fast"
        assert report.tokens.prompt > 0 and report.tokens.completion > 0
        prompt = first.calls[0][1].content
        assert "## Measurements" in prompt and "interpreter-wall" in prompt and "BLOCK=256" in prompt
        assert "Halve the grid" in first.calls[1][1].content, "the attempt from this kernel is shown next time"
        texts = [d.text for d in store.decisions(run_id=report.run_id)]
        assert texts == ["Halve the grid.", "Use a larger block so fewer programs are launched."]
        second = ScriptedModel([SLOWER])
        again = OptimizeLoop(second, evaluator, store=store, config=dataclasses.replace(config, iterations=1))
        again.run(SCALE_TASK, SCALE_GOOD, tmp_path / "b.py")
        assert "Halve the grid" in second.calls[0][1].content and "## Experience" in second.calls[0][1].content
        assert store.injections(run_id=again_run(store)), "what was injected is logged"
        assert store.edges(kind="used_evidence"), "the new version records the evidence it was shown"
        blind = ScriptedModel([SLOWER])
        OptimizeLoop(blind, evaluator, store=store, config=dataclasses.replace(config, iterations=1, memory=False)).run(
            SCALE_TASK, SCALE_GOOD, tmp_path / "c.py"
        )
        assert "## Experience" not in blind.calls[0][1].content


def again_run(store: ExperienceStore) -> int:
    return max(r.id for r in store.runs())


def test_exit_code_is_0_for_a_correct_result_1_for_a_wrong_start_2_when_it_does_not_run() -> None:
    def report(status: str, start: str) -> OptimizeReport:
        return OptimizeReport(
            status=status,
            task="t",
            kernel="k",
            model="offline",
            output=None,
            device="cpu",  # type: ignore[arg-type]
            timing_method=None,
            trajectory=[Node(index=0, kind="start", status=start)],
        )

    assert report("improved", "pass").exit_code == report("not-improved", "pass").exit_code == 0
    assert report("incorrect-start", "fail").exit_code == report("incorrect-start", "reject").exit_code == 1
    assert report("incorrect-start", "error").exit_code == 2
    assert report("incorrect-start", "pass").exit_code == 2, "correct but could not be timed"
