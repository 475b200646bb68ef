"""Recurrent models with plain tensor state (kope.evaluate.inside.state) and candidates that read their own copy of
the task's module-level sizes (`JobSpec.size_globals`): an honest kernel passes every case."""

from __future__ import annotations

import copy
from pathlib import Path

import torch
from conftest import FIXTURES

from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.inside.state import same_state_each_call

RECURRENT = FIXTURES / "recurrent"


class _Cell(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = torch.nn.Module()
        self.inner.hidden = torch.ones(2)  # type: ignore[assignment]
        self.scale = torch.nn.Parameter(torch.ones(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.inner.hidden = self.inner.hidden + x  # type: ignore[assignment]
        return self.inner.hidden * self.scale


def test_every_call_starts_from_the_state_the_model_was_built_with() -> None:
    cell = _Cell()
    assert same_state_each_call(cell) == 1  # the plain tensor, not the parameter
    x = torch.full((2,), 3.0)
    assert cell(x).tolist() == cell(x).tolist() == [4.0, 4.0]
    # a deep copy in float64 (the reference's precise twin) restores its own submodule
    twin = copy.deepcopy(cell).to(torch.float64)
    assert twin(x.double()).tolist() == [4.0, 4.0] and cell.inner.hidden.tolist() == [4.0, 4.0]
    assert same_state_each_call(torch.nn.Linear(2, 2)) == 0


def test_an_honest_recurrent_kernel_passes_every_trial_and_size(evaluator: Evaluator) -> None:
    """Three trials (the reference's float64 twin made after the first) and cases of other batch sizes, which the
    candidate's own `batch_size = 8` would not fit. Before, trials 2 and 3 compared the kernel with the reference
    at other steps of the recurrence, and every case of another batch size raised."""
    result = evaluator.evaluate(
        RECURRENT / "rnn_hidden_task.py", RECURRENT / "rnn_hidden_good.py", options=EvalOptions(trials=3)
    )
    assert result.status == "pass", [(c.name, c.mismatch_fraction, c.error) for c in result.cases]
    assert {c.overrides.get("batch_size", 8) for c in result.cases} > {8}


def test_a_tensor_written_in_place_is_put_back_and_one_left_alone_is_not_copied_again() -> None:
    cell = _Cell()
    cell.inner.constant = torch.zeros(3)  # type: ignore[assignment]
    same_state_each_call(cell)
    x = torch.full((2,), 1.0)
    cell(x)
    kept = cell.inner.constant
    cell(x)
    assert cell.inner.constant is kept  # neither replaced nor written: not copied again
    kept.add_(5.0)  # written in place (a forward could): put back as built before the next call
    cell(x)
    assert cell.inner.constant is not kept and cell.inner.constant.tolist() == [0.0, 0.0, 0.0]


def test_a_size_name_the_candidate_binds_to_its_own_object_is_left_alone(evaluator: Evaluator, tmp_path: Path) -> None:
    """An attacker's `input_size` whose `==` raises (or answers anything) is never compared: only plain data is."""
    good = (RECURRENT / "rnn_hidden_good.py").read_text()
    hostile = tmp_path / "hostile.py"
    hostile.write_text(
        good
        + "\n\nclass _Any:\n    def __eq__(self, other):\n        raise RuntimeError('compared')\n"
        + "\n\ninput_size = _Any()\n"
    )
    result = evaluator.evaluate(RECURRENT / "rnn_hidden_task.py", hostile, options=EvalOptions(trials=1))
    assert result.status == "pass", [(c.name, c.error) for c in result.cases]
