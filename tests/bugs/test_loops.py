"""Loop bounds (kope.bugs.loops): a loop that steps by a block but reads one element a step (`loop-step`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPORA, FIXTURES, verdicts

from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator

LOOPS = FIXTURES / "loops"


def _loop_steps(source: str) -> list[str]:
    program = Program.parse(source)
    assert program is not None
    return [e.description for e in edits(program, ["loop-step"])]


def test_a_window_walked_by_block_steps_is_fixed_only_by_stepping_every_such_loop_by_one(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = LOOPS / "pool_task.py"
    program = Program.parse((LOOPS / "pool_window_step.py").read_text(), task.read_text())
    assert program is not None
    made = edits(program, ["loop-step"])
    assert [e.grounded for e in made] == [True, True, True]
    both, *singles = made
    assert both.description.endswith("(2 loops)") and "range(0, 2, BLOCK_D)" not in both.source
    assert all("one element a step" in e.cue for e in made)
    assert verdicts(evaluator, task, [e.source for e in (both, *singles)], tmp_path) == ["pass", "fail", "fail"]


@pytest.mark.parametrize(
    "body",
    [
        "    offs = k + tl.arange(0, BLOCK)\n    acc += tl.load(x_ptr + offs, mask=offs < n)\n",  # a block loop
        "    mask = lanes < n - k\n    acc += tl.load(x_ptr + k + lanes, mask=mask)\n",  # lanes made before the loop
        "    acc += tl.load(x_ptr + k) + tl.load(x_ptr + k + 1)\n",  # a loop over pairs
        "    acc += _chunk(x_ptr, k, n, BLOCK)\n",  # a helper walks the block
        "    acc += tl.load(x_ptr)\n",  # the position is not used: a count
        "    p = tl.make_block_ptr(x_ptr, (n,), (1,), (k,), (BLOCK,), (0,))\n    acc += tl.sum(tl.load(p))\n",
    ],
)
def test_loops_that_visit_every_element_are_not_offered(body: str) -> None:
    source = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "  lanes = tl.arange(0, BLOCK)\n  acc = 0.0\n  for k in range(0, n, BLOCK):\n"
        + body
        + "  tl.store(out_ptr, acc)\n"
    )
    assert _loop_steps(source) == []


def test_a_strided_loop_that_starts_at_its_program_is_not_offered() -> None:
    """A grid-stride loop: the programs interleave, each reading one element a step."""
    source = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, out_ptr, n, PROGRAMS: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n"
        "    for i in range(pid, n, PROGRAMS):\n"
        "        tl.store(out_ptr + i, tl.load(x_ptr + i) * 2.0)\n"
    )
    assert _loop_steps(source) == []


def test_the_corpora_block_loops_are_not_offered() -> None:
    """Every kernel kope ships, right or wrong, walks its blocks with lanes: none is a one-element-a-step loop."""
    found = [
        path.name
        for path in sorted(CORPORA.rglob("*.py"))
        if (program := Program.parse(path.read_text())) is not None and edits(program, ["loop-step"])
    ]
    assert found == []


def test_a_chunk_count_from_the_host_becomes_the_kernels_own(evaluator: Evaluator, tmp_path: Path) -> None:
    """Loops over a row's chunks that run a count the host worked out for the widest autotune config (too few
    chunks under the narrower one) count the chunks at the kernel's own width in one grounded edit; a loop whose
    count is its own `tl.cdiv` is left."""
    task = LOOPS / "center_task.py"
    program = Program.parse((LOOPS / "center_chunks.py").read_text(), task.read_text())
    assert program is not None
    (made,) = edits(program, ["block-count"])
    assert made.grounded and "(2 loop(s))" in made.description
    assert made.source.count("range(0, tl.cdiv(n, BLOCK))") == 1 and "range(tl.cdiv(n, BLOCK))" in made.source
    right = Program.parse(made.source)
    assert right is not None and edits(right, ["block-count"]) == []
    assert verdicts(evaluator, task, [program.text, made.source], tmp_path) == ["fail", "pass"]


def test_a_programs_own_tile_of_blocks_and_a_tuned_count_are_not_chunks_of_the_size() -> None:
    """`for u in range(UNROLL)` over a program's tile (`pid * BLOCK * UNROLL + u * BLOCK`) walks a part of the size,
    not all of it; nor is a count the autotune sets one the host worked out: neither gets `block-count`."""
    text = (LOOPS / "center_chunks.py").read_text()
    tile = text.replace("idx = c * BLOCK + lanes", "idx = row * BLOCK * chunks + c * BLOCK + lanes")
    tuned = text.replace('{"BLOCK": 16}', '{"BLOCK": 16, "chunks": 8}')
    for source in (tile, tuned):
        program = Program.parse(source)
        assert program is not None and source != text and edits(program, ["block-count"]) == []
