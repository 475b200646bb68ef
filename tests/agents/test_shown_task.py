"""What the model is shown: the task's interface at its visible case, never its hidden cases or their sizes.

The bundled log-softmax task hides cases with 4097 and 20000 columns. A real `kope debug --model openai:...`
run against a loopback server that records every request: the candidate is right on the visible case and
wrong past one block of 1024 columns, so the loop checks it on every case (hidden ones fail), diagnoses it
on sizes of its own, and asks the model twice. No request body holds a hidden size.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from models.servers import Script, openai_reply, serve
from typer.testing import CliRunner

from kope.agents.prompts import shown_task
from kope.cases.task import Case, load_task
from kope.cli import app
from kope.ops import get_op

HIDDEN = ("4097", "20000")


def test_shown_task_drops_get_cases_and_sets_the_visible_sizes(tmp_path: Path) -> None:
    task = tmp_path / "task.py"
    task.write_text(
        "import torch\nimport torch.nn as nn\n\nN = 4097\nSIZES = [4097, 20000]\nscale = 2.0\n\n\n"
        "class Model(nn.Module):\n    def forward(self, x):\n        return x * scale\n\n\n"
        "def get_inputs():\n    return [torch.randn(N)]\n\n\ndef get_init_inputs():\n    return []\n\n\n"
        "# hidden: N = 20000 catches a missing mask\n"
        "def get_cases():\n    return [{'N': 300}] + [{'N': n} for n in SIZES]\n"
    )
    shown = shown_task(load_task(task), Case(name="N=300", overrides={"N": 300}))
    assert "N = 300\n" in shown and "scale = 2.0" in shown and "def get_inputs" in shown and "class Model" in shown
    assert "get_cases" not in shown and "SIZES" not in shown and "hidden" not in shown
    assert not any(size in shown for size in HIDDEN)
    compile(shown, "shown.py", "exec")


def _near_miss() -> str:
    """The log-softmax kernel at 1024-column blocks, whose second pass skips the first block: right on rows of
    up to 1024 columns (the visible case has 1000), wrong on longer ones."""
    source = get_op("log_softmax").kernel_path.read_text().replace("MAX_BLOCK = 4096", "MAX_BLOCK = 1024")
    second_pass = "        for start in range(0, n_cols, BLOCK):\n"
    assert source.count(second_pass) == 1
    return source.replace(second_pass, "        for start in range(BLOCK, n_cols, BLOCK):\n")


@pytest.mark.slow
def test_debug_never_sends_a_hidden_case_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    task = get_op("log_softmax").task_path
    assert all(size in task.read_text() for size in HIDDEN)  # the task does hide these sizes
    candidate = tmp_path / "candidate.py"
    candidate.write_text(_near_miss())
    script = Script([(200, openai_reply("I cannot tell what is wrong yet."), {})])
    with serve(script) as url:
        result = CliRunner().invoke(
            app,
            [
                "debug",
                str(task),
                str(candidate),
                "--model",
                "openai:local-model",
                "--base-url",
                f"{url}/v1",
                "--max-iterations",
                "2",
                "--device",
                "cpu",
                "--no-probes",
                "--out",
                str(tmp_path / "out.py"),
                "--json",
            ],
        )
    assert result.exit_code == 1, result.output  # unrepaired
    assert len(script.requests) == 2
    bodies = [json.dumps(request) for request in script.requests]
    prompts = ["\n".join(m["content"] for m in request["messages"]) for request in script.requests]
    assert "fails" in prompts[0] and "hidden case" in prompts[0]  # the loop did learn of the hidden failures
    assert "batch_size = 64" in prompts[0] and "dim = 1000" in prompts[0] and "def get_inputs" in prompts[0]
    for body in bodies:
        assert "get_cases" not in body
        for size in HIDDEN:
            assert size not in body, f"hidden size {size} sent to the model"
