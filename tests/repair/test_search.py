"""The offline search: ranking by evidence (no evaluation) and a real two-edit repair no recipe makes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import FIXTURES, NEAR_MISS
from rich.console import Console

from kope.agents import DebugConfig, DebugLoop
from kope.cases.task import Case, load_task
from kope.diagnose.report import Diagnosis
from kope.evaluate import EvalOptions, Evaluator
from kope.knowledge.retrieval import Hypothesis
from kope.ops import get_op
from kope.protocol import BoundsEvent
from kope.repair.explain import explain
from kope.repair.search import Candidate, RepairSearch, SearchConfig, SearchResult

RELU = (NEAR_MISS / "relu_grid_floor_div.py").read_text()


def diagnosis(*patterns: str, bounds_line: int | None = None) -> Diagnosis:
    hypotheses = [Hypothesis(pattern=p, score=10.0 - i) for i, p in enumerate(patterns)]
    bounds = (
        [
            BoundsEvent(
                kind="store",
                kernel="_relu_kernel",
                line=bounds_line,
                pid=[0],
                lanes=3,
                elements_out=3,
                nearest="past the end of out",
            )
        ]
        if bounds_line
        else []
    )
    return Diagnosis(status="fail", task="t", candidate="c", hypotheses=hypotheses, bounds=bounds)


def test_hypotheses_order_the_operators_and_the_evidence_orders_the_sites(evaluator: Evaluator) -> None:
    source = RELU.replace("mask = offs < n_elements", "mask = offs <= n_elements")
    search = RepairSearch(evaluator, SearchConfig())
    first = search.candidates(source, diagnosis("mask-off-by-one", "grid-too-small"), "")[0]
    assert (first.label, first.line) == ("mask-off-by-one", 17)
    assert "hypothesis #1" in first.why
    first = search.candidates(source, diagnosis("grid-too-small", "mask-off-by-one"), "")[0]
    assert first.label == "grid-too-small"
    # Two comparisons: the one on the line the bounds checker names goes first.
    source = source.replace("y = tl.where(x < 0, 0.0, x)", "y = tl.where(x > 0, x, 0.0)")
    ranked = [
        c
        for c in search.candidates(source, diagnosis("mask-off-by-one", bounds_line=19), "")
        if c.operator == "compare-flip"
    ]
    assert [c.line for c in ranked] == [19, 17]
    assert "bounds checker" in ranked[0].why


def test_search_repairs_two_bugs_with_a_second_edit_on_top_of_the_first(evaluator: Evaluator, tmp_path: Path) -> None:
    # The grid is too small (a recipe fixes it) and the result is scaled before its store (no recipe does):
    # the first edit improves without fixing, the second on top of it is accepted.
    candidate = tmp_path / "relu_two_bugs.py"
    candidate.write_text(RELU.replace("y = tl.where(x < 0, 0.0, x)", "y = tl.where(x < 0, 0.0, x) * 1.5"))
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=16))
    report = DebugLoop(None, evaluator, config=config).run(get_op("relu").task_path, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    fixed = (tmp_path / "fixed.py").read_text()
    assert "triton.cdiv(n_elements, BLOCK)" in fixed and "* 1.5" not in fixed
    trials = [t for r in report.search for t in r.trials]
    accepted = [t for t in trials if t.verdict == "accepted"]
    assert len(accepted) == 1 and (accepted[0].depth == 2 or len(report.search) == 2)
    assert any(t.verdict == "kept" for t in trials)
    assert report.tokens.prompt == report.tokens.completion == 0
    assert report.evaluations >= len(trials)
    console = Console(record=True, width=200)
    for part in explain(report.search):
        console.print(part)
    text = console.export_text()
    assert "accepted" in text and "kept" in text and "search round 1" in text


def test_with_recipes_first_an_llm_sees_the_search_summary_in_its_prompt(evaluator: Evaluator, tmp_path: Path) -> None:
    from conftest import SCALE_GOOD, SCALE_TASK

    from kope.models.replay import ScriptedModel

    broken = tmp_path / "broken.py"
    broken.write_text(SCALE_GOOD.read_text().replace("* 2.0", "* 2.5"))
    edit = "<<<<<<< SEARCH\n* 2.5, mask=mask)\n=======\n* 2.0, mask=mask)\n>>>>>>> REPLACE\n"
    model = ScriptedModel(["The factor is off.\n" + edit])
    # No proposer: the search has nothing to try, ends at once, and the model takes over.
    config = DebugConfig(probes=False, recipes_first=True, search_config=SearchConfig(proposers=[]))
    report = DebugLoop(model, evaluator, config=config).run(SCALE_TASK, broken, tmp_path / "out.py")
    assert report.status == "repaired" and [s.action for s in report.steps] == ["search", "edit"]
    assert report.search[0].evaluations == 0 and report.search[0].stop_reason == "exhausted"
    prompt = "\n".join(m.content for m in model.calls[0])
    assert "kope's offline search tried 0 small edit(s)" in prompt


def test_operators_take_turns() -> None:
    from kope.repair.search import diversified

    def many(operator: str, priority: float, n: int) -> list[Candidate]:
        return [
            Candidate(operator, "same-id", i, f"{operator} {i}", f"{operator}{i}", priority=priority) for i in range(n)
        ]

    # Two operators of equal priority alternate instead of one using the budget first, even under one taxonomy id.
    order = [c.operator for c in diversified(many("a", 2.0, 6) + many("b", 2.0, 6))][:6]
    assert order.count("a") == order.count("b") == 3
    # A lead of one point lasts about three turns.
    ranked = diversified(many("top", 3.0, 12) + many("other", 2.0, 12))
    assert [c.operator for c in ranked[:5]] == ["top", "top", "top", "other", "top"]


def test_an_edit_written_two_ways_is_one_candidate_and_keeps_its_better_rank(evaluator: Evaluator) -> None:
    from kope.repair.search import change_key

    base = "def f(x, beta):\n    y = g(x)\n    return y\n"
    one = base.replace("g(x)", "g(x * beta)")
    other = base.replace("g(x)", "g((beta * x))")
    assert change_key(base, one) == change_key(base, other) != ""
    assert change_key(base, base.replace("g(x)", "g((x))")) == ""  # parentheses alone change nothing
    assert change_key(base, one) != change_key(base, base.replace("g(x)", "g(x / beta)"))
    # acc += v and acc = acc + v are one program
    loop = "def f(v):\n    acc = 0\n    for i in v:\n        acc = i\n    return acc\n"
    assert change_key(loop, loop.replace("acc = i", "acc += i")) == change_key(
        loop, loop.replace("acc = i", "acc = acc + i")
    )
    # in the search: two operators' spellings of one fix are evaluated once
    source = (NEAR_MISS / "relu_grid_floor_div.py").read_text()
    keys = [change_key(source, c.source) for c in RepairSearch(evaluator).candidates(source, None, "")]
    assert len(keys) == len(set(keys))


def test_an_edit_that_breaks_the_source_is_no_candidate() -> None:
    from kope.bugs.edit import parses

    base = "def f(x):\n    if x:\n        y = x + 1\n    return y\n"
    assert parses(base, base.replace("x + 1", "x + 2"))
    assert not parses(base, base.replace("x + 1", "x + (1"))
    assert not parses(base, base.replace("        y = x + 1", "    y = x + 1\n  z = 2"))  # indentation broken


def test_a_start_right_on_the_shown_case_gets_more_acceptance_checks(evaluator: Evaluator, tmp_path: Path) -> None:
    # A bug that shows only on hidden cases: the start is right on the shown case, so most edits are right there
    # too and only the full check tells them apart; the round spends more of its checks on them.
    from conftest import SCALE_GOOD, SCALE_TASK

    from kope.cases.task import load_task

    task = load_task(SCALE_TASK)
    shown = [c for c in evaluator.cases(task) if c.visible]
    source = SCALE_GOOD.read_text()
    checked: list[str] = []

    def reject(version: str) -> bool:
        checked.append(version)
        return False

    config = SearchConfig(max_evaluations=12, max_acceptance_checks=1, right_start_acceptance_checks=3)
    search = RepairSearch(evaluator, config)
    right = search.run(task, source, None, shown, reject, scratch=tmp_path / "a", start_score=(0, 0.0, 0.0))
    right_on_shown = [t for t in right.trials if "right on the shown" in t.reason]
    assert len(right_on_shown) > 3 and right.acceptance_checks == len(checked) == 3
    checked.clear()
    wrong = search.run(task, source, None, shown, reject, scratch=tmp_path / "b", start_score=(2, 1.0, 0.0))
    assert wrong.acceptance_checks == len(checked) == 1


HUGE_WEIGHT_TASK = '''
"""A product with a square weight: small inputs, but 40000 x 40000 weights at the task's own sizes (6.4 GB)."""
import torch
import torch.nn as nn

batch = 2
dim = 40000


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, dim) / dim)

    def forward(self, x):
        return x @ self.weight


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim]
'''


def test_the_own_size_check_cannot_tell_where_the_reference_itself_does_not_fit(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """The task's own sizes fit the element budget (inputs and output), but its weights do not fit a job's memory:
    the reference fails there, so the check says nothing of the version (it used to end the whole repair)."""
    task = tmp_path / "huge_weight.py"
    task.write_text(HUGE_WEIGHT_TASK)
    loaded = load_task(task)
    search = RepairSearch(evaluator, SearchConfig())
    quick = EvalOptions(trials=1, integrity=False, timing=False, memory_mb=1024)
    own = search.own_size_case(loaded, quick)
    assert own is not None and dict(own.overrides) == {}
    assert search._right_at(loaded, "this version never runs", own, replace(quick, timeout_s=60), tmp_path)


def test_after_a_false_repair_the_search_is_shown_the_smallest_case_that_shows_the_bug(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Two bugs: `tl.abs` stored for ReLU (wrong on every case) and the grid capped at 512 programs of 1024 (wrong
    only past 524,288 elements: the task's own million, not the 300,000 of a derived case). The formula's fix alone
    is a false repair; the case shrunk to twice the derived budget (600,000) shows the cap, joins the shown cases,
    and the cap's fix on top of the formula's is the one version right there: accepted after one false repair.
    Without the refinement every second edit is right on the shown case and is refused at the own sizes in turn."""

    loaded = load_task(FIXTURES / "capped" / "relu_million_task.py")
    source = (FIXTURES / "capped" / "relu_capped.py").read_text().replace("tl.maximum(x, 0.0)", "tl.abs(x)")
    visible = [c for c in evaluator.cases(loaded) if c.visible]
    results: list[SearchResult] = []
    for refine in (True, False):
        config = SearchConfig(max_evaluations=24, batch=1, second_edits=12, max_acceptance_checks=3, refine=refine)
        search = RepairSearch(evaluator, config)
        results.append(search.run(loaded, source, None, visible, lambda s: True, scratch=tmp_path / f"s{refine}"))
    refined, plain = results
    assert refined.accepted is not None and "512" not in refined.accepted and "tl.abs" not in refined.accepted
    assert refined.false_repairs == 1 and refined.refined.startswith("shrunk x2")
    assert plain.refined == "" and plain.false_repairs > 1


def test_a_version_that_fails_its_acceptance_check_shows_the_search_the_cases_it_fails(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Two bugs: the result scaled by 1.5 (wrong on every case) and a grid of `n // BLOCK` programs (wrong only where
    n is no multiple of 1024: the hidden odd sizes, not the shown 4096). The scale's fix alone is right on the shown
    case and fails its acceptance check; the odd case it fails then joins the shown ones, so the versions made on top
    of it that change nothing there are told apart without a check each, and the grid's fix is accepted. Without,
    the second check goes to one of those and the round ends unrepaired."""

    path = tmp_path / "relu_4096.py"
    # ReLU of 4096 elements: four whole blocks of 1024 at the task's own size, a partial one at odd sizes
    million = (FIXTURES / "capped" / "relu_million_task.py").read_text()
    assert "n = 1000000" in million
    path.write_text(million.replace("n = 1000000", "n = 4096"))
    loaded = load_task(path)
    every = evaluator.cases(loaded)
    visible = [c for c in every if c.visible]
    source = RELU.replace("y = tl.where(x < 0, 0.0, x)", "y = tl.where(x < 0, 0.0, x) * 1.5")

    wrong: dict[str, list[Case]] = {}

    def accept(version: str) -> bool:
        candidate = tmp_path / "accept.py"
        candidate.write_text(version)
        result = evaluator.evaluate(loaded, candidate, options=EvalOptions(trials=1), cases=every)
        failed = {r.name for r in result.cases if not r.passed}
        wrong[version] = [c for c in every if c.name in failed]
        return result.status == "pass"

    results: list[SearchResult] = []
    for rescreen, refused in ((2, lambda version: wrong.get(version, [])), (2, None), (0, None)):
        config = SearchConfig(max_evaluations=40, batch=1, max_acceptance_checks=2, rescreen=rescreen, refine=False)
        search = RepairSearch(evaluator, config)
        scratch = tmp_path / f"s{len(results)}"
        results.append(search.run(loaded, source, None, visible, accept, scratch=scratch, refused=refused))
    told, screened, plain = results
    for shown in (told, screened):  # the cases the check found wrong, or those an evaluation on others finds
        assert shown.accepted is not None and "* 1.5" not in shown.accepted and "// BLOCK" not in shown.accepted
        assert shown.screen and any("shown too" in t.reason for t in shown.trials), shown.summary()
    # the start evaluated once more on the cases that joined (what later versions are scored against), the version on
    # them (where it stops now is what its second edits read), and the screen's evaluation where the caller does not
    # say which cases the check found wrong
    assert told.evaluations == len(told.trials) + 2 and screened.evaluations == len(screened.trials) + 3
    assert plain.accepted is None and plain.acceptance_checks == 2, plain.summary()
    # its checks spent, the round ended at the first version right on the shown case it could not check; that version
    # was not marked tried, so the next round (from the best version, with fresh checks) evaluates it again
    assert plain.stop_reason == "acceptance checks" and plain.best is not None
    assert plain.trials[-1].reason.startswith("right on the shown case(s); no acceptance check left")
    seen: set[str] = set()
    config = SearchConfig(max_evaluations=40, batch=1, max_acceptance_checks=2, rescreen=0, refine=False)
    search = RepairSearch(evaluator, config)
    first = search.run(loaded, source, None, visible, accept, scratch=tmp_path / "r1", tried=seen)
    assert first.best is not None
    second = search.run(loaded, first.best, None, visible, accept, scratch=tmp_path / "r2", tried=seen)
    assert second.accepted is not None and "// BLOCK" not in second.accepted, second.summary()


class _Literal:
    """Proposes each given rewrite wherever its text is in the source (the test's own operators)."""

    name = "literal"

    def __init__(self, *rewrites: tuple[str, str]) -> None:
        self.rewrites = rewrites

    def propose(self, source: str, diagnosis: Diagnosis | None, evidence: object, reference: str) -> list[Candidate]:
        return [
            Candidate("literal", "literal", 19, f"drop `{old}`", source.replace(old, new), priority=1.0)
            for old, new in self.rewrites
            if old in source
        ]


def test_two_bugs_whose_fixes_alone_move_no_score_are_found_on_top_of_the_leading_edit(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A ReLU off by `+ 1.0` wherever x > -1.5 and by `- 0.75` everywhere: every element is wrong. Dropping the
    `- 0.75` alone leaves the 93% with x > -1.5 wrong (fewer, but not a tenth fewer, and a larger error: neither kept
    nor informative); dropping the gate alone leaves every element wrong. The first is the leading edit: its second
    edits hold the other fix, accepted. Without them, the search ends with no version kept."""
    task = load_task(get_op("relu").task_path)
    every = evaluator.cases(task)
    visible = [c for c in every if c.visible]
    gate, shift = " + tl.where(x > -1.5, 1.0, 0.0)", " - 0.75"
    source = RELU.replace("n_elements // BLOCK", "triton.cdiv(n_elements, BLOCK)")
    source = source.replace("y = tl.where(x < 0, 0.0, x)", f"y = tl.where(x < 0, 0.0, x){gate}{shift}")

    def accept(version: str) -> bool:
        candidate = tmp_path / "accept.py"
        candidate.write_text(version)
        return evaluator.evaluate(task, candidate, options=EvalOptions(trials=1), cases=every).status == "pass"

    results: list[SearchResult] = []
    for leading in (4, 0):
        config = SearchConfig(proposers=[_Literal((gate, ""), (shift, ""))], batch=1, leading_edits=leading)
        scratch = tmp_path / f"s{leading}"
        results.append(RepairSearch(evaluator, config).run(task, source, None, visible, accept, scratch=scratch))
    led, plain = results
    assert led.accepted is not None and gate not in led.accepted and shift not in led.accepted, led.summary()
    accepted = [t for t in led.trials if t.verdict == "accepted"]
    assert accepted[0].depth == 2 and accepted[0].description.startswith(f"drop `{shift}`, then"), led.summary()
    assert plain.accepted is None and plain.best is None and plain.informative == [], plain.summary()
    assert [t.verdict for t in plain.trials] == ["dropped", "dropped"], plain.summary()


def test_a_version_that_raises_on_hidden_cases_shows_the_search_those_cases(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Two bugs: the ReLU written over its input (the gates reject it on every case) and a block capped at the size
    (`min(4096, n)`: `tl.arange` raises at the hidden odd sizes, not at the shown 4096). The gates' fix alone is right
    on the shown case and raises at its full check; the cases it raises on join the shown ones, where the start
    raises too, so the cap's fix ranks above it and the gates' fix on top of that one is accepted. Before, a case
    that raised never joined: every version right on the shown case spent a full check of its own, none repaired."""

    task = tmp_path / "relu_4096.py"
    task.write_text((FIXTURES / "capped" / "relu_million_task.py").read_text().replace("n = 1000000", "n = 4096"))
    candidate = tmp_path / "relu_in_place.py"
    forward = RELU[RELU.index("    def forward") :]
    candidate.write_text(
        RELU.replace(
            forward,
            "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
            "        x = x.contiguous()\n"
            "        n = x.numel()\n"
            "        block = min(4096, n)\n"
            "        _relu_kernel[(triton.cdiv(n, block),)](x, x, n, BLOCK=block, num_warps=4)\n"
            "        return x\n",
        )
    )
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=40))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", [r.summary() for r in report.search]
    fixed = (tmp_path / "fixed.py").read_text()
    assert "triton.next_power_of_2(n)" in fixed and "x_out = torch.empty_like(x)" in fixed
    assert report.evaluations < 30, report.evaluations


class _Counting:
    """The real evaluator, counting the elements of the cases each evaluation of a search's version runs."""

    def __init__(self, inner: Evaluator, sizes: dict[str, int]) -> None:
        self.inner, self.sizes = inner, sizes
        self.runs: list[list[str]] = []

    def evaluate(self, task: object, path: Path, **kwargs: object) -> object:
        cases = kwargs.get("cases")
        if path.name.startswith("variant_") and isinstance(cases, list):
            self.runs.append([c.name for c in cases])
        return self.inner.evaluate(task, path, **kwargs)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def _deferring_and_plain(
    evaluator: Evaluator, tmp_path: Path, source: str, start: tuple[int, float, float]
) -> tuple[tuple[SearchResult, list[list[str]]], tuple[SearchResult, list[list[str]]], dict[str, int]]:
    """The search on a ReLU task of 4096 elements (shown: that case alone), taken as slow, with deferral (ratio 1.1)
    and without: each result with the cases every evaluation of a version ran, and the cases' sizes."""

    path = tmp_path / "relu_4096.py"
    path.write_text((FIXTURES / "capped" / "relu_million_task.py").read_text().replace("n = 1000000", "n = 4096"))
    task = load_task(path)
    every = evaluator.cases(task)
    sizes = {c.name: c.numel or 0 for c in evaluator.derivation(task, None).kept}

    def accept(version: str) -> bool:
        candidate = tmp_path / "accept.py"
        candidate.write_text(version)
        return evaluator.evaluate(task, candidate, options=EvalOptions(trials=1), cases=every).status == "pass"

    arms = []
    for ratio in (1.1, 0.0):
        counting = _Counting(evaluator, sizes)
        config = SearchConfig(max_evaluations=40, batch=1, defer_ratio=ratio, defer_seconds=0.0, refine=False)
        shown = [c for c in every if c.visible]
        result = RepairSearch(counting, config).run(  # type: ignore[arg-type]
            task, source, None, shown, accept, scratch=tmp_path / f"r{ratio}", start_score=start
        )
        arms.append((result, counting.runs))
    return arms[0], arms[1], sizes


def test_the_largest_shown_cases_are_evaluated_only_for_versions_better_on_the_others(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A grid of `n // BLOCK` programs: right on the shown 4096 elements, wrong on the hidden sizes that are no
    multiple of the block, which the screen adds to the shown cases. With the 4096-element case deferred, a version
    is evaluated there only once it scores better than the start on the small cases: the same repair, the same
    scores, fewer elements evaluated."""
    (deferring, deferring_runs), (plain, plain_runs), sizes = _deferring_and_plain(
        evaluator, tmp_path, RELU, (0, 0.0, 0.0)
    )
    assert deferring.accepted is not None and deferring.accepted == plain.accepted, deferring.summary()
    assert "triton.cdiv" in deferring.accepted or "+ BLOCK - 1" in deferring.accepted
    assert [t.score for t in deferring.trials] == [t.score for t in plain.trials]  # ranked alike
    assert all("original" in run for run in plain_runs)
    whole = [run for run in deferring_runs if "original" in run]
    assert whole and len(whole) < len(deferring_runs)  # the large case only after a version did better on the rest
    elements = [sum(sizes[name] for run in runs for name in run) for runs in (deferring_runs, plain_runs)]
    assert elements[0] < elements[1], elements


def test_a_slow_start_wrong_on_large_shown_cases_is_searched_on_the_cheapest_cases_it_fails(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A ReLU whose mask leaves out the last element, wrong on every case, shown only the 4096-element one. Taken
    as slow (`defer_seconds` 0), the start is first evaluated on the cheapest other cases; those it fails join the
    shown ones, and the large case is deferred: a version runs there only where it is right on the small cases or
    does better there than every version run on all of them (a kept version's children do not each pay for it)."""
    source = RELU.replace("grid = (n_elements // BLOCK,)", "grid = (triton.cdiv(n_elements, BLOCK),)").replace(
        "mask = offs < n_elements", "mask = offs < n_elements - 1"
    )
    (deferring, deferring_runs), (plain, plain_runs), _ = _deferring_and_plain(
        evaluator, tmp_path, source, (2, 1.0, 0.5)
    )
    assert deferring.accepted is not None and plain.accepted is not None, deferring.summary()
    assert deferring.screen == ["one", "prime"]  # the cheapest cases the start fails joined the shown one at once
    assert plain_runs[0] == ["original"] and deferring_runs[0] == ["one", "prime"]
    assert "offs < n_elements - 1" not in deferring.accepted and "offs < n_elements - 1" not in plain.accepted
    full = [run for run in deferring_runs if "original" in run]
    assert 0 < len(full) <= sum(t.verdict in ("kept", "accepted") for t in deferring.trials)  # only those that gained


def test_a_version_that_runs_where_the_start_did_not_but_too_slowly_ends_the_round(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    # The start stops before it runs (a function Triton lacks); mended, the kernel runs past the evaluation's time
    # limit (a long loop): the round ends on that version, for the caller to fit the cases to it.
    from conftest import SCALE_GOOD, SCALE_TASK

    task = load_task(SCALE_TASK)
    shown = [c for c in evaluator.cases(task) if c.visible]
    source = SCALE_GOOD.read_text().replace(
        "    mask = offsets < n\n",
        "    mask = offsets < n\n    spin = 0\n    for i in range(400000):\n        spin = tl.floor_div(spin + i, 2)\n",
    )
    options = EvalOptions(trials=1, timeout_s=4, memory_mb=2048)
    start = evaluator.evaluate(task, _written(tmp_path, source), options=options, cases=shown)
    assert start.status == "error" and start.error is not None and start.error.kind != "timeout"
    config = SearchConfig(max_evaluations=20, batch=1)
    result = RepairSearch(evaluator, config).run(
        task,
        source,
        Diagnosis.model_construct(evaluation=start, hypotheses=[]),
        shown,
        lambda _: False,
        scratch=tmp_path / "s",
        options=options,
    )
    assert result.stop_reason == "slow version" and result.best is None
    assert result.slow is not None and "tl.floor_div" not in result.slow and "// (2)" in result.slow
    assert len(result.trials) == 1  # nothing more from it in this round: every version made from it is as slow


def test_a_grounded_edit_whose_version_runs_too_slowly_ends_the_round_on_it(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    # The start runs, wrong (3 for 2), and its loop steps by 4000 reading one element a step (a rule broken on every
    # input: `loop-step` is grounded). Mended, the loop takes all its 400,000 steps: past the evaluation's time limit,
    # which says the version is slow, not wrong. The round ends on it, for the caller to fit the cases to it;
    # before, it was dropped as an error like any version that ran out of time, and the round went on without it.
    from conftest import SCALE_GOOD, SCALE_TASK

    task = load_task(SCALE_TASK)
    shown = [c for c in evaluator.cases(task) if c.visible]
    source = (
        SCALE_GOOD.read_text()
        .replace(
            "    mask = offsets < n\n",
            "    mask = offsets < n\n    spin = 0.0\n    for i in range(0, 400000, 4000):\n"
            "        spin += tl.load(x_ptr + i % n) * 0.0\n",
        )
        .replace("* 2.0, mask=mask)", "* 3.0 + spin, mask=mask)")
    )
    options = EvalOptions(trials=1, timeout_s=8, memory_mb=2048)
    start = evaluator.evaluate(task, _written(tmp_path, source), options=options, cases=shown)
    assert start.status == "fail", start.error
    config = SearchConfig(max_evaluations=20, batch=1)
    result = RepairSearch(evaluator, config).run(
        task,
        source,
        Diagnosis.model_construct(evaluation=start, hypotheses=[]),
        shown,
        lambda _: False,
        scratch=tmp_path / "s",
        options=options,
    )
    assert result.stop_reason == "slow version" and result.best is None, result.trials
    assert result.slow is not None and "range(0, 400000)" in result.slow
    assert result.trials[0].operator == "loop-step" and len(result.trials) == 1


def _written(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "start.py"
    path.write_text(source)
    return path


def test_an_own_size_check_that_times_out_is_stood_in_for_by_a_smaller_case_that_tells(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """As above, but the kernel is slow at the task's own million elements (its host sleeps there): the own-size check
    runs out of its time limit and cannot tell. The largest shrunk case that tells (twice the derived budget, 600,000
    elements, past the cap) stands in for it: the formula's fix alone is found wrong there (a false repair, not
    accepted because a check timed out), and the cap's fix on top of it is accepted."""

    loaded = load_task(FIXTURES / "capped" / "relu_million_task.py")
    source = (FIXTURES / "capped" / "relu_capped.py").read_text().replace("tl.maximum(x, 0.0)", "tl.abs(x)")
    source = source.replace(
        "        n = x.numel()\n", "        n = x.numel()\n        if n > 900_000:\n            time.sleep(30)\n"
    ).replace("import torch\n", "import time\n\nimport torch\n", 1)
    visible = [c for c in evaluator.cases(loaded) if c.visible]
    config = SearchConfig(max_evaluations=24, batch=1, second_edits=12, max_acceptance_checks=3, own_size_seconds=6)
    result = RepairSearch(evaluator, config).run(loaded, source, None, visible, lambda s: True, scratch=tmp_path)
    assert result.accepted is not None and "512" not in result.accepted and "tl.abs" not in result.accepted
    assert result.false_repairs == 1 and result.refined.startswith("shrunk x2"), result.trials
    # the case at 4 x the budget is the task's own million whole (the own-size check's): not run again
    assert result.evaluations <= len(result.trials) + 2, (result.evaluations, len(result.trials))


def test_a_version_made_from_one_that_failed_its_check_and_mends_a_case_it_failed_is_the_rounds_best(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Three bugs: the result scaled by 1.5 (wrong on every case), a grid of `n // BLOCK` programs (wrong at the hidden
    odd sizes) and a cap at 6 (wrong only on the hidden scaled inputs). The scale's fix is right on the shown case and
    fails its check; scored on the cases it fails, as the versions made from it are, one of those (with the grid's or
    the cap's fix too) mends a case and is the round's best, so the next round starts from it and the third fix is
    accepted. Before, the version right on the shown case stayed the best (a class above any wrong one) and the next
    round started from it again, its second edits tried already."""
    path = tmp_path / "relu_4096.py"
    million = (FIXTURES / "capped" / "relu_million_task.py").read_text()
    path.write_text(million.replace("n = 1000000", "n = 4096"))
    loaded = load_task(path)
    every = evaluator.cases(loaded)
    visible = [c for c in every if c.visible]
    scale, cap, grid = (
        (" * 1.5", ""),
        ("tl.minimum(x, 6.0)", "x"),
        ("n_elements // BLOCK", "triton.cdiv(n_elements, BLOCK)"),
    )
    source = RELU.replace("y = tl.where(x < 0, 0.0, x)", "y = tl.where(x < 0, 0.0, tl.minimum(x, 6.0)) * 1.5")

    def accept(version: str) -> bool:
        candidate = tmp_path / "accept.py"
        candidate.write_text(version)
        return evaluator.evaluate(loaded, candidate, options=EvalOptions(trials=1), cases=every).status == "pass"

    config = SearchConfig(
        proposers=[_Literal(scale, cap, grid)], batch=1, max_acceptance_checks=2, refine=False, max_evaluations=12
    )
    search = RepairSearch(evaluator, config)
    seen: set[str] = set()
    first = search.run(loaded, source, None, visible, accept, scratch=tmp_path / "r1", tried=seen)
    assert first.accepted is None and first.best is not None, first.summary()
    assert scale[0] not in first.best and (cap[0] not in first.best or grid[0] not in first.best), first.summary()
    second = search.run(loaded, first.best, None, visible, accept, scratch=tmp_path / "r2", tried=seen)
    assert second.accepted is not None, second.summary()


def test_a_false_repair_is_scored_on_the_case_that_showed_it_so_a_version_that_mends_that_case_leads(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Three bugs: `tl.abs` stored for ReLU (wrong on every case), the grid capped at 512 programs (wrong past 524,288
    elements) and a mask that stops at 900,000 (wrong only at the task's own million). The formula's fix is refused at
    the own sizes and the shrunk x2 case (600,000) joins the shown ones; scored there as the versions made from it
    are, it yields to the version with the cap's fix too (right on every shown case, refused in turn), the next round
    starts from that one and the mask's fix is accepted. Before, the first refused version stayed the round's best and
    the next round found nothing left to try from it."""
    loaded = load_task(FIXTURES / "capped" / "relu_million_task.py")
    source = (FIXTURES / "capped" / "relu_capped.py").read_text()
    source = source.replace("tl.maximum(x, 0.0)", "tl.abs(x)").replace(
        "mask = offs < n", "mask = (offs < n) & (offs < 900000)"
    )
    visible = [c for c in evaluator.cases(loaded) if c.visible]
    rewrites = (("tl.abs(x)", "tl.maximum(x, 0.0)"), ("min(triton.cdiv(n, 1024), 512)", "triton.cdiv(n, 1024)"))
    rewrites += ((" & (offs < 900000)", ""),)
    config = SearchConfig(
        proposers=[_Literal(*rewrites)], batch=1, max_acceptance_checks=3, max_evaluations=12, refine=True
    )
    search = RepairSearch(evaluator, config)
    seen: set[str] = set()
    first = search.run(loaded, source, None, visible, lambda s: True, scratch=tmp_path / "r1", tried=seen)
    assert first.accepted is None and first.refined.startswith("shrunk x2"), first.summary()
    assert first.best is not None and "tl.abs" not in first.best and "512" not in first.best, first.summary()
    second = search.run(loaded, first.best, None, visible, lambda s: True, scratch=tmp_path / "r2", tried=seen)
    assert second.accepted is not None and "900000" not in second.accepted, second.summary()
