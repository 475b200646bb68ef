"""The repair prompt carries kope's findings: a real debug loop on real near misses (Triton in the interpreter),
with a scripted model that records what it is sent and answers with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kope.agents import DebugConfig, DebugLoop
from kope.evaluate import Evaluator
from kope.models.replay import ScriptedModel

FINDINGS = Path(__file__).parents[1] / "fixtures" / "findings"
HEADING = "## Findings (kope's analysis of the reference and the kernel)"


def repair(evaluator: Evaluator, tmp_path: Path, task: str, near_miss: str, fix: str, *, findings: bool):  # type: ignore[no-untyped-def]
    fixed = (FINDINGS / f"{fix}.py").read_text()
    model = ScriptedModel([f"The kernel's formula is wrong.\n```python\n{fixed}```\n"])
    config = DebugConfig(probes=False, findings=findings)
    report = DebugLoop(model, evaluator, config=config).run(
        FINDINGS / f"{task}.py", FINDINGS / f"{near_miss}.py", tmp_path / "out.py"
    )
    (messages,) = model.calls
    return report, messages[-1].content


@pytest.mark.parametrize(
    ("task", "near_miss", "fix", "said"),
    [
        ("swish_task", "swish_sigmoid", "swish_good", ["The reference applies silu.", "(1.0 + tl.exp(-x)))`"]),
        (
            "elu_task",
            "elu_linear",
            "elu_good",
            ["elu(alpha=0.7)", "where the reference's value is negative; right elsewhere"],
        ),
        ("sum_task", "sum_shared_store", "sum_good", ["Several programs write one output element: line 11"]),
    ],
)
def test_the_prompt_states_the_findings_and_the_fix_repairs(
    evaluator: Evaluator, tmp_path: Path, task: str, near_miss: str, fix: str, said: list[str]
) -> None:
    report, prompt = repair(evaluator, tmp_path, task, near_miss, fix, findings=True)
    assert report.status == "repaired" and report.iterations == 1
    section = prompt.split(HEADING, 1)[1].split("\n## ", 1)[0]
    for text in said:
        assert text in section
    assert "1031" not in prompt and "777" not in prompt  # the hidden cases' sizes


def test_without_findings_the_prompt_is_shorter_and_says_none_of_them(evaluator: Evaluator, tmp_path: Path) -> None:
    with_them, prompt = repair(evaluator, tmp_path, "elu_task", "elu_linear", "elu_good", findings=True)
    without, bare = repair(evaluator, tmp_path, "elu_task", "elu_linear", "elu_good", findings=False)
    assert HEADING in prompt and HEADING not in bare
    assert "tl.exp(tl.minimum(x, 0.0))" not in bare
    assert without.status == with_them.status == "repaired"
    assert without.tokens.completion == with_them.tokens.completion
    assert with_them.tokens.prompt > without.tokens.prompt
