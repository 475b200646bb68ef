"""Normalisation statistics (kope.bugs.norms): a batch norm written with the batch's statistics where the reference,
in eval mode, normalises with its running ones (`eval-statistics`)."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES

from kope.bugs.edit import Program, edits
from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import ModuleMode

NORMS = FIXTURES / "norms"


def _program(source: str, task: Path) -> Program:
    program = Program.parse(source, task.read_text())
    assert program is not None
    return program


def _status(evaluator: Evaluator, task: Path, text: str, path: Path, mode: ModuleMode) -> str:
    path.write_text(text)
    options = EvalOptions(trials=1, timeout_s=60, memory_mb=2048, module_mode=mode)
    return evaluator.evaluate(task, path, options=options, which="visible").status


def test_batch_statistics_read_the_running_ones_when_the_model_is_not_training(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = NORMS / "bn_task.py"
    program = _program((NORMS / "bn_batch_stats.py").read_text(), task)
    (edit,) = edits(program, ["eval-statistics"])
    assert not edit.grounded and "`bn` normalises with its running statistics" in edit.cue
    evaluated = Program.parse(program.text, task.read_text(), module_mode="eval")
    assert evaluated is not None and edits(evaluated, ["eval-statistics"])[0].grounded  # wrong on every input there
    assert "self.register_buffer('running_mean', torch.zeros(features))" in edit.source
    assert "if not self.training:\n            mean = self.running_mean\n" in edit.source
    assert "rstd = torch.rsqrt(self.running_var + 1e-05)" in edit.source
    before, after = program.text, edit.source
    assert _status(evaluator, task, before, tmp_path / "a.py", "eval") == "fail"
    assert _status(evaluator, task, after, tmp_path / "b.py", "eval") == "pass"
    assert _status(evaluator, task, after, tmp_path / "c.py", "train") == "pass"  # the batch's, while training


def test_statistics_made_in_a_helper_arrive_as_a_keyword_its_call_passes() -> None:
    source = (NORMS / "bn_batch_stats.py").read_text()
    body = source[source.index("        x = x.contiguous()") :]
    helper = "\n".join(line.removeprefix("    ") for line in body.splitlines())
    helper = helper.replace("self.", "")
    source = source[: source.index("        x = x.contiguous()")]
    source += "        return bn_relu(x, self.weight, self.bias, self.eps)\n\n\ndef bn_relu(x, weight, bias, eps):\n"
    program = _program(source + helper + "\n", NORMS / "bn_task.py")
    (edit,) = edits(program, ["eval-statistics"])
    assert "def bn_relu(x, weight, bias, eps, bn_running=None):" in edit.source
    assert "bn_relu(x, self.weight, self.bias, self.eps, bn_running=(None if self.training else (" in edit.source
    assert "    if bn_running is not None:\n        mean = bn_running[0]\n" in edit.source


def test_running_statistics_or_a_reference_without_a_batch_norm_get_no_edit() -> None:
    source = (NORMS / "bn_batch_stats.py").read_text()
    running = source.replace(
        "        column_stats_kernel[(N,)](x, mean, rstd, M, N, self.eps, BLOCK_M=triton.next_power_of_2(M))\n",
        "        mean = self.running_mean\n        rstd = torch.rsqrt(self.running_var + self.eps)\n",
    )
    assert edits(_program(running, NORMS / "bn_task.py"), ["eval-statistics"]) == []
    plain = FIXTURES / "host" / "linear_task.py"
    assert edits(_program(source, plain), ["eval-statistics"]) == []


def test_the_offline_search_mends_the_statistics_then_the_error_a_case_of_one_raises_on_top(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """The running statistics are right on the shown case but the kept version stops on a batch of one
    (`M.to(...)`: Triton makes an argument of 1 a constant): its second edits read that error (`host-cast`)."""
    from kope.agents import DebugConfig, DebugLoop
    from kope.repair.search import SearchConfig

    task = NORMS / "bn_task.py"
    candidate = tmp_path / "candidate.py"
    text = (NORMS / "bn_batch_stats.py").read_text()
    candidate.write_text(text.replace("mean = tl.sum(x, axis=0) / M", "mean = tl.sum(x, axis=0) / M.to(tl.float32)"))
    config = DebugConfig(
        probes=False,
        search_config=SearchConfig(max_evaluations=12),
        options=EvalOptions(module_mode="eval"),
    )
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert report.status == "repaired" and accepted == ["host-cast"]
    fixed = (tmp_path / "fixed.py").read_text()
    assert "mean = self.running_mean" in fixed and "tl.cast(M, tl.float32)" in fixed
