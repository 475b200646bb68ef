"""An edit of a line that other kernels repeat word for word is also offered on every copy (kope.bugs.edit): a model
that wrote one matrix product and copied it for the next layer copied its bug too."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES

from kope.bugs.edit import Program, edits
from kope.evaluate import EvalOptions, Evaluator

CLONED = FIXTURES / "cloned"


def test_the_fix_of_a_copied_line_is_offered_on_every_copy_and_only_that_is_right(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = CLONED / "two_linear_task.py"
    program = Program.parse((CLONED / "two_linear_copied_bug.py").read_text(), task.read_text())
    assert program is not None
    advance = "b_ptrs += BLOCK_K * stride_bk"
    made = [e for e in edits(program, ["stride-name"]) if advance in e.source]
    single = next(e for e in made if "copies" not in e.description)
    both = next(e for e in made if "copies" in e.description)
    assert both.description.endswith("(and on each of the 2 copies of the line, in 2 kernels)")
    assert both.source.count(advance) == 2 and single.source.count(advance) == 1
    options = EvalOptions(trials=1, timeout_s=60, memory_mb=2048)
    verdicts = []
    for edit in (single, both):
        path = tmp_path / f"{len(verdicts)}.py"
        path.write_text(edit.source)
        verdicts.append(evaluator.evaluate(task, path, options=options, which="visible").status)
    assert verdicts == ["fail", "pass"]


def test_a_line_repeated_within_one_kernel_has_no_copies() -> None:
    """One kernel that advances its pointer twice by the same line: the line repeats, but no other kernel has it."""
    source = (CLONED / "two_linear_copied_bug.py").read_text()
    alone = source[: source.index("@triton.jit\ndef matmul_kernel")] + source[source.index("def _launch") :]
    alone = alone.replace("matmul_kernel, h", "matmul_sigmoid_kernel, h")
    twice = "        b_ptrs += BLOCK_K * stride_bn\n"
    alone = alone.replace(twice, twice + twice, 1)
    program = Program.parse(alone, (CLONED / "two_linear_task.py").read_text())
    assert program is not None and alone.count(twice) == 2
    made = edits(program, ["stride-name"])
    assert any("stride_bk" in e.description for e in made)
    assert not any("copies" in e.description for e in made)
