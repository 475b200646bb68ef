from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK

from kope.agents import pass_at_k, regenerate
from kope.evaluate import Evaluator
from kope.models.replay import ScriptedModel


def test_pass_at_k_estimator() -> None:
    assert pass_at_k(3, 0, 1) == 0.0
    assert pass_at_k(3, 3, 3) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)


def test_regenerate_counts_passes_rejects_and_tokens(evaluator: Evaluator, tmp_path: Path) -> None:
    good = f"```python\n{SCALE_GOOD.read_text()}```"
    cheat = (
        "```python\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x "
        "* 2.0\n```"
    )
    wrong = good.replace("* 2.0", "* 3.0")
    model = ScriptedModel([good, cheat, wrong, "sorry, no code"], repeat_last=False)
    report = regenerate(SCALE_TASK, model, k=4, out_dir=tmp_path, evaluator=evaluator)
    assert [s.status for s in report.samples] == ["pass", "reject", "fail", "no-code"]
    assert report.passes == 1 and report.rejected == 1 and report.pass_at_1 == pytest.approx(0.25)
    assert report.tokens.prompt > 0 and report.tokens_per_success == report.tokens.prompt + report.tokens.completion
    assert "class Model(nn.Module)" in model.calls[0][0].content


def test_offline_model_cannot_regenerate(evaluator: Evaluator, tmp_path: Path) -> None:
    report = regenerate(SCALE_TASK, None, k=3, out_dir=tmp_path, evaluator=evaluator)
    assert report.samples == [] and "needs a model" in report.note
