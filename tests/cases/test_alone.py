"""Derived cases that vary one size at a time: a bug past one block shows in the dimension where it lives,
even where the shrunk base case keeps every size under a block."""

from __future__ import annotations

import json

from conftest import FIXTURES
from typer.testing import CliRunner

from kope.cases.derive import ALONE_SMALL, BLOCK_LADDER, MAX_ALONE
from kope.cases.task import load_task
from kope.cli import app
from kope.evaluate import EvalOptions, Evaluator

DERIVE = FIXTURES / "derive"
TALL = DERIVE / "tall.py"
OPTIONS = EvalOptions(trials=1, timeout_s=60, max_elements=2000)
"""A budget that shrinks tall.py's M = 100 rows to 8, under one block of 64."""


def test_a_size_the_base_keeps_under_a_block_is_varied_alone_past_it(evaluator: Evaluator) -> None:
    result = evaluator.derivation(load_task(TALL), OPTIONS)
    kept = {c.name: c for c in result.kept}
    assert kept["shrunk"].overrides == {"M": 8, "N": 248} and kept["shrunk"].visible
    alone = kept["alone-M"]
    assert alone.overrides == {"M": 65, "N": ALONE_SMALL} and not alone.visible
    assert alone.reason == "M alone past one block (65), the others small"
    assert "alone-N" not in kept, "the base's N = 248 is already past the largest value the share of the budget holds"
    assert all(max(c.numel or 0, c.output_numel or 0) <= 2000 for c in result.kept)


def test_a_kernel_wrong_past_one_block_fails_only_the_case_that_varies_that_size(evaluator: Evaluator) -> None:
    buggy = evaluator.evaluate(TALL, DERIVE / "tall_one_block.py", options=OPTIONS)
    assert buggy.status == "fail"
    assert [c.name for c in buggy.cases if not c.passed] == ["alone-M"]
    good = evaluator.evaluate(TALL, DERIVE / "tall_good.py", options=OPTIONS)
    assert good.status == "pass", [(c.name, c.error) for c in good.cases if not c.passed]


def test_tied_sizes_that_cannot_vary_alone_are_dropped_with_the_reference_error(evaluator: Evaluator) -> None:
    # the hinge loss broadcasts a (batch,) tensor against (batch, n): batch and n must agree
    result = evaluator.derivation(load_task(DERIVE / "hinge.py"), EvalOptions(max_elements=20_000))
    alone = [c for c in result.candidates if c.kind == "alone"]
    assert alone and not any(c.kept for c in alone)
    assert all("must match" in c.reason for c in alone)
    assert any(c.name == "prime-tied" and c.kept for c in result.candidates)


def test_sizes_that_already_fit_get_no_case_alone(evaluator: Evaluator) -> None:
    result = evaluator.derivation(load_task(DERIVE / "rows.py"), EvalOptions())
    assert not any(c.kind == "alone" for c in result.candidates), "the task's own sizes already run"


def test_the_ladder_is_past_each_usual_block_and_bounded() -> None:
    assert tuple(sorted(BLOCK_LADDER, reverse=True)) == BLOCK_LADDER
    assert all(v % 16 for v in BLOCK_LADDER) and BLOCK_LADDER[0] > 1024
    assert all(v % k for k in range(2, 33) for v in BLOCK_LADDER[:1]), "the largest is prime"
    assert MAX_ALONE <= 4


def test_kope_cases_prints_why_a_size_varies_alone(evaluator: Evaluator) -> None:
    result = CliRunner().invoke(app, ["cases", str(TALL), "--json", "--device", "cpu", "--max-elements", "2000"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    rows = {c["name"]: c for c in payload["cases"]}
    assert rows["alone-M"]["overrides"] == {"M": 65, "N": ALONE_SMALL} and not rows["alone-M"]["visible"]
    reasons = {c["name"]: c["reason"] for c in payload["derivation"]["candidates"]}
    assert reasons["alone-M"] == "M alone past one block (65), the others small"
