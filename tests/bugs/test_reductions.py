"""Reductions and accumulators (kope.bugs.reductions): the edits that real kernels' accumulation bugs need."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, SCALE_TASK

from kope.bugs.edit import Program, edits
from kope.evaluate import EvalOptions, Evaluator

ATOMIC = FIXTURES / "interpreter" / "autotune_atomic.py"


def test_an_autotuned_atomic_accumulation_gets_its_buffer_restored_around_the_benchmark(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """The kernel adds into its zeroed output atomically under an autotune of two configs that neither resets nor
    restores it: the benchmark's run adds too (kope's interpreter runs it as a GPU does). `restore_value` is
    grounded (right whatever the host put in the buffer), `reset_to_zero` offered; the restored version passes."""
    source = ATOMIC.read_text()
    program = Program.parse(source, SCALE_TASK.read_text())
    assert program is not None
    made = edits(program, ["autotune-restore"])
    assert made[0].grounded and "restore_value=['out_ptr']" in made[0].source
    assert any(not e.grounded and "reset_to_zero=['out_ptr']" in e.source for e in made)
    restored = tmp_path / "restored.py"
    restored.write_text(made[0].source)
    options = EvalOptions(trials=2, timeout_s=60)
    assert evaluator.evaluate(SCALE_TASK, ATOMIC, options=options, which=["N=1000"]).status == "fail"
    assert evaluator.evaluate(SCALE_TASK, restored, options=options, which=["N=1000"]).status == "pass"
    covered = Program.parse(made[0].source, SCALE_TASK.read_text())
    assert covered is not None and edits(covered, ["autotune-restore"]) == []  # named already: nothing more
