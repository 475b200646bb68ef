"""The findings a repair prompt states, from a real diagnosis of real near misses (Triton in the interpreter).

tests/fixtures/findings holds the near misses: a Swish stored as its sigmoid, an ELU whose negative branch is
linear, a sum whose every program stores its partial to the one output element.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kope.agents.prompts import shown_task
from kope.cases.task import load_task
from kope.diagnose import Diagnoser
from kope.diagnose.findings import Findings, findings
from kope.evaluate import EvalOptions, Evaluator

FINDINGS = Path(__file__).parents[1] / "fixtures" / "findings"


def found(evaluator: Evaluator, task_name: str, candidate: str) -> Findings:
    task = load_task(FINDINGS / f"{task_name}.py")
    shown = [c for c in evaluator.cases(task) if c.visible]
    diagnosis = Diagnoser(evaluator).diagnose(
        task, FINDINGS / f"{candidate}.py", cases=shown, probes=False, options=EvalOptions(trials=1)
    )
    assert diagnosis.status == "fail"
    return findings(diagnosis, shown_task(task, shown[0]), (FINDINGS / f"{candidate}.py").read_text())


def test_a_swish_stored_as_its_sigmoid_is_told_the_references_formula(evaluator: Evaluator) -> None:
    result = found(evaluator, "swish_task", "swish_sigmoid")
    assert [f.name for f in result.formulas] == ["silu"]
    assert result.formulas[0].triton == "x * (1.0 / (1.0 + tl.exp(-x)))"
    assert result.region is None  # sigmoid(x) is wrong nearly everywhere, not in one region
    assert result.shared_stores == [] and result.contradictions == []
    text = result.text()
    assert "The reference applies silu." in text and "`x * (1.0 / (1.0 + tl.exp(-x)))`" in text


def test_an_elu_with_a_linear_negative_branch_is_told_its_region_and_alpha(evaluator: Evaluator) -> None:
    result = found(evaluator, "elu_task", "elu_linear")
    assert result.region is not None and result.region.region == "reference < 0"
    assert 0 < result.region.wrong < result.region.numel == 16 * 300
    (elu,) = result.formulas
    assert elu.name == "elu" and elu.params == {"alpha": 0.7} and elu.defaults == []
    text = result.text()
    assert "elu(alpha=0.7)" in text and "0.7 * (tl.exp(tl.minimum(x, 0.0)) - 1.0)" in text
    assert "where the reference's value is negative; right elsewhere" in text
    assert "of 4800 elements wrong on the case you are shown" in text
    assert "1031" not in text  # the hidden case's size


def test_a_sum_stored_by_every_program_is_told_several_programs_write_one_element(evaluator: Evaluator) -> None:
    result = found(evaluator, "sum_task", "sum_shared_store")
    assert result.formulas == [] and result.region is None
    (hit,) = result.shared_stores
    assert hit.line == 11 and hit.text == "tl.store(out_ptr, tl.sum(x, axis=0))"
    text = result.text()
    assert "Several programs write one output element: line 11" in text
    assert "tl.atomic_add" in text and "second pass" in text and "normalise" in text


def test_defaults_are_named_and_a_passing_or_missing_diagnosis_has_no_findings() -> None:
    reference = (FINDINGS / "swish_task.py").read_text().replace("F.silu(x)", "F.softplus(F.gelu(x), beta=2.0)")
    from kope.diagnose.report import Diagnosis

    failed = findings(Diagnosis(status="fail", task="t.py", candidate="c.py"), reference)
    assert [f.name for f in failed.formulas] == ["gelu", "softplus"]
    text = failed.text()
    assert 'gelu(approximate="none" (PyTorch\'s default))' in text
    assert "softplus(beta=2, threshold=20 (PyTorch's default))" in text
    assert "`tl.where((x * 2.0) > 20.0, x," in text
    assert "Triton" not in failed.text(formulas=False)
    assert not findings(Diagnosis(status="pass", task="t.py", candidate="c.py"), reference)
    assert not findings(None, reference)


def test_a_block_that_never_moves_while_its_partner_does_is_told_as_a_contradiction_of_the_source() -> None:
    from kope.diagnose.report import Diagnosis

    kernel = (FINDINGS / "mm_stuck.py").read_text()
    failed = findings(
        Diagnosis(status="fail", task="t.py", candidate="c.py"), (FINDINGS / "mm_task.py").read_text(), kernel
    )
    (contradiction,) = failed.contradictions
    assert kernel.splitlines()[contradiction.line - 1].strip().startswith("b = tl.load(b_tile")
    assert "at the same addresses on every iteration" in contradiction.text
    text = failed.text()
    assert f"at line {contradiction.line}: line {contradiction.line} loads `b_tile`" in text
    assert "b_base +=" not in text, "the finding states the fact, not the edit"


@pytest.mark.parametrize("label", ["reference < 0", "|reference| large"])
def test_the_region_is_said_in_words(label: str) -> None:
    from kope.diagnose.findings import RegionFinding

    text = Findings(region=RegionFinding(region=label, wrong=3, numel=10)).text()
    assert text.startswith("- Wrong only in one value region: where the reference's")
    assert "3 of 10 elements wrong" in text
