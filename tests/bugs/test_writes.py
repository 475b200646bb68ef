"""How outputs are written (kope.bugs.writes): an atomic accumulation that only one program along an axis makes."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

ROW_SQUARES_TASK = textwrap.dedent(
    '''
    """The sum of squares of each row."""
    import torch
    import torch.nn as nn

    rows = 6
    cols = 300


    class Model(nn.Module):
        def forward(self, x):
            return (x * x).sum(dim=1)


    def get_inputs():
        return [torch.randn(rows, cols)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"rows": 6, "cols": 300}, {"rows": 3, "cols": 129}]
    '''
)

GUARDED = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _row_squares(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        pid_n = tl.program_id(1)
        offs = pid_n * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
        partial = tl.sum(x * x, axis=0)
        if pid_n == 0:
            tl.atomic_add(out_ptr + row, partial)


    class ModelNew(nn.Module):
        def forward(self, x):
            rows, cols = x.shape
            out = torch.zeros(rows, device=x.device, dtype=x.dtype)
            _row_squares[(rows, triton.cdiv(cols, 64))](x, out, cols, BLOCK=64)
            return out
    """
)


def test_an_atomic_only_the_first_program_makes_is_made_by_every_program(evaluator: Evaluator, tmp_path: Path) -> None:
    program = Program.parse(GUARDED, ROW_SQUARES_TASK)
    assert program is not None
    made = edits(program, ["guarded-atomic"])
    assert len(made) == 1 and made[0].grounded and "pid_n == 0" in made[0].cue
    assert "if pid_n" not in made[0].source and "\n    tl.atomic_add(out_ptr + row, partial)" in made[0].source
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(ROW_SQUARES_TASK)
    candidate.write_text(GUARDED)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "if pid_n" not in (tmp_path / "fixed.py").read_text()


def test_a_guard_on_an_axis_the_partial_does_not_depend_on_is_left_alone() -> None:
    """Every program of axis 1 computes the same row total (it loads the whole row): one of them adds it, rightly."""
    redundant = GUARDED.replace("offs = pid_n * BLOCK + tl.arange(0, BLOCK)", "offs = tl.arange(0, BLOCK)")
    program = Program.parse(redundant, ROW_SQUARES_TASK)
    assert program is not None and edits(program, ["guarded-atomic"]) == []
    unguarded = GUARDED.replace("if pid_n == 0:\n        tl.atomic_add", "if row >= 0:\n        tl.atomic_add")
    program = Program.parse(unguarded, ROW_SQUARES_TASK)
    assert program is not None and edits(program, ["guarded-atomic"]) == []


STORED = GUARDED.replace("tl.atomic_add(out_ptr + row, partial)", "tl.store(out_ptr + row, partial)").replace(
    "out = torch.zeros(rows", "out = torch.empty(rows"
)
"""Each program of axis 1 sums its own column block, and only the first stores its partial: the others' are lost."""


def test_a_store_only_the_first_program_makes_becomes_an_atomic_add_into_a_zeroed_output(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    program = Program.parse(STORED, ROW_SQUARES_TASK)
    assert program is not None
    (made,) = edits(program, ["guarded-atomic"])
    assert made.grounded and "tl.store" in made.cue
    assert "if pid_n" not in made.source and "\n    tl.atomic_add(out_ptr + row, partial)" in made.source
    assert "out = torch.zeros(rows" in made.source  # every program adds into it: it starts at zero
    # an output that is already zeros stays as it is; one the host does not allocate is not this edit's to change
    zeroed = Program.parse(STORED.replace("torch.empty(rows", "torch.zeros(rows"), ROW_SQUARES_TASK)
    assert zeroed is not None and [e.source.count("torch.zeros") for e in edits(zeroed, ["guarded-atomic"])] == [1]
    given = Program.parse(
        STORED.replace("out = torch.empty(rows, device=x.device, dtype=x.dtype)", "out = x[:, 0]"), ""
    )
    assert given is not None and edits(given, ["guarded-atomic"]) == []
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(ROW_SQUARES_TASK)
    candidate.write_text(STORED)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "tl.atomic_add(out_ptr + row, partial)" in (tmp_path / "fixed.py").read_text()


DOUBLE_TASK = textwrap.dedent(
    '''
    """Twice the input."""
    import torch
    import torch.nn as nn

    n = 3000


    class Model(nn.Module):
        def forward(self, x):
            return x * 2.0


    def get_inputs():
        return [torch.randn(n)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"n": 3000}, {"n": 777}]
    '''
)

IN_PLACE = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(out_ptr + offs, x * 2.0, mask=offs < n)


    class ModelNew(nn.Module):
        def forward(self, x):
            x = x.contiguous()
            n = x.numel()
            _double[(triton.cdiv(n, 256),)](x, x, n, BLOCK=256)  # in place: saves an allocation
            return x
    """
)


def test_a_result_stored_over_the_input_gets_its_own_buffer(evaluator: Evaluator, tmp_path: Path) -> None:
    """Right values, written over the caller's input: the gates reject it (input-mutation); the repair gives the
    result its own buffer, returned in the input's place."""
    program = Program.parse(IN_PLACE, DOUBLE_TASK)
    assert program is not None
    made = edits(program, ["own-output"])
    assert len(made) == 1 and made[0].grounded
    assert "x_out = torch.empty_like(x)\n" in made[0].source and "(x, x_out, n, BLOCK=256)" in made[0].source
    assert made[0].source.rstrip().endswith("return x_out")
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(DOUBLE_TASK)
    candidate.write_text(IN_PLACE)
    assert evaluator.evaluate(task, candidate).integrity.verdict == "reject"
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "torch.empty_like(x)" in (tmp_path / "fixed.py").read_text()


def test_a_launch_that_reads_one_tensor_and_writes_another_is_left_alone() -> None:
    program = Program.parse(IN_PLACE.replace("](x, x, n", "](x, y, n").replace("return x", "return y"), DOUBLE_TASK)
    assert program is not None and edits(program, ["own-output"]) == []
