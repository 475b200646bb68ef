"""The stride kind: `missing-advance`, a loop that moves one operand's pointer along the reduction while its partner,
indexed by the same lanes, is read at the same addresses on every iteration (a bug real models make in matrix
products: `a_ptrs += BLOCK_K * stride_ak` without the matching `b_ptrs += BLOCK_K * stride_bk`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import verdicts

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

FIXTURES = Path(__file__).parents[1] / "fixtures" / "findings"
TASK = (FIXTURES / "mm_task.py").read_text()
STUCK = (FIXTURES / "mm_stuck.py").read_text()


def test_missing_advance_moves_the_partner_by_its_own_stride_after_the_other_advance() -> None:
    program = Program.parse(STUCK, TASK)
    assert program is not None
    edit, offset = edits(program, ["missing-advance"])
    assert edit.grounded and "b_tile" in edit.cue
    assert "b_tile + k * s_bk" in offset.source, "the same fix as an offset: the loop steps by its block"
    assert "a_base += BK * s_ak\n        b_base += BK * s_bk\n" in edit.source
    fixed = Program.parse(edit.source, TASK)
    assert fixed is not None and edits(fixed, ["missing-advance"]) == []


def test_missing_advance_leaves_a_block_that_is_not_indexed_by_the_loop_lanes() -> None:
    with_bias = STUCK.replace(
        "        a_base += BK * s_ak\n", "        a_base += BK * s_ak\n        b_base += BK * s_bk\n"
    ).replace(
        "acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)",
        "acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1) + tl.load(c_ptr + cols * s_cn)[None, :] * 0.0",
    )
    program = Program.parse(with_bias, TASK)
    assert program is not None and edits(program, ["missing-advance"]) == []


NEITHER_MOVES = (
    STUCK.replace("for k in range(0, K, BK):", "for k in range(0, tl.cdiv(K, BK)):")
    .replace("K - k)", "K - k * BK)")
    .replace("        a_base += BK * s_ak\n", "")
)


def test_missing_advance_offsets_loads_whose_mask_moves_with_the_loop_and_whose_address_does_not() -> None:
    program = Program.parse(NEITHER_MOVES, TASK)
    assert program is not None and "a_base +=" not in NEITHER_MOVES and "K - k * BK" in NEITHER_MOVES
    both, *alone = edits(program, ["missing-advance"])
    assert both.grounded and "a_tile + (k * BK) * s_ak" in both.source and "b_tile + (k * BK) * s_bk" in both.source
    assert len(alone) == 2 and not any(e.grounded for e in alone)
    rows_only = NEITHER_MOVES.replace("(ks[None, :] < K - k * BK)", "(ks[None, :] < K)").replace(
        "(ks[:, None] < K - k * BK)", "(ks[:, None] < K)"
    )
    unmoved = Program.parse(rows_only, TASK)
    assert unmoved is not None and edits(unmoved, ["missing-advance"]) == [], "no mask says where the loop is"


SHARED_STEP = STUCK.replace("    acc = tl.zeros(", "    step = BK * s_ak\n    acc = tl.zeros(").replace(
    "        a_base += BK * s_ak\n", "        a_base += step\n        b_base += step\n"
)
"""One step for both pointers, bound once before the loop (`k_step = BLOCK_K * stride_ak`, a form real models
write): right for `a`, wrong for `b`, whose loads pair the loop's lanes with `s_bk`."""


def test_advance_axis_sees_through_a_step_bound_once() -> None:
    program = Program.parse(SHARED_STEP, TASK)
    assert program is not None and "b_base += step" in SHARED_STEP
    (edit,) = edits(program, ["advance-axis"])
    assert edit.grounded and "a_base += step\n        b_base += BK * s_bk\n" in edit.source
    fixed = Program.parse(edit.source, TASK)
    assert fixed is not None and edits(fixed, ["advance-axis"]) == []


@pytest.mark.parametrize("kernel", ["second-operand-stuck", "neither-moves", "shared-step"])
def test_a_product_whose_operand_never_moves_is_repaired(kernel: str, evaluator: Evaluator, tmp_path: Path) -> None:
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TASK)
    candidate.write_text({"second-operand-stuck": STUCK, "neither-moves": NEITHER_MOVES}.get(kernel, SHARED_STEP))
    assert evaluator.evaluate(task, candidate).status == "fail"
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=16))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert accepted == ["advance-axis" if kernel == "shared-step" else "missing-advance"], accepted


def test_advance_axis_moves_a_pointer_by_the_stride_of_the_lanes_its_loop_walks() -> None:
    """`b_ptrs += BLOCK_K * stride_bn`: the loop walks `offs_k` (its masks, and `a_ptrs`' advance say so), and
    `b_ptrs` pairs `offs_k` with `stride_bk`. Grounded, offered on each copied kernel and on both at once; the right
    kernels kope ships get no such edit."""
    cloned = Path(__file__).parents[1] / "fixtures" / "cloned"
    program = Program.parse(
        (cloned / "two_linear_copied_bug.py").read_text(), (cloned / "two_linear_task.py").read_text()
    )
    assert program is not None
    made = edits(program, ["advance-axis"])
    assert [e.grounded for e in made] == [True, True, True]
    assert all("walks `offs_k` (stride `stride_bk`)" in e.cue for e in made)
    assert [e.source.count("b_ptrs += BLOCK_K * stride_bk") for e in made] == [1, 2, 1]
    fixed = Program.parse(made[1].source)
    assert fixed is not None and edits(fixed, ["advance-axis"]) == []
    right = Program.parse(STUCK.replace("a_base += BK * s_ak", "a_base += BK * s_ak\n        b_base += BK * s_bk"))
    assert right is not None and edits(right, ["advance-axis"]) == []


DRIFT = Path(__file__).parents[1] / "fixtures" / "strides"


def test_pointers_advanced_by_a_growing_offset_advance_by_its_change_per_iteration_together(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = DRIFT / "drift_task.py"
    program = Program.parse((DRIFT / "matmul_drift.py").read_text(), task.read_text())
    assert program is not None
    both, single_a, single_b = edits(program, ["pointer-drift"])
    assert "a_ptrs += BLOCK_K * stride_ak" in both.source and "b_ptrs += BLOCK_K * stride_bk" in both.source
    assert "k_next * stride_bk" in single_a.source and "k_next * stride_ak" in single_b.source
    assert "grows with `k`" in both.cue
    assert verdicts(evaluator, task, [program.text, both.source, single_a.source], tmp_path) == ["fail", "pass", "fail"]


def test_an_offset_added_to_a_pointer_inside_a_loop_is_also_read_as_an_offset_from_its_base() -> None:
    source = """
import triton
import triton.language as tl

@triton.jit
def rows_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for row in range(0, n_rows):
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        out_ptr += row
        tl.store(out_ptr, tl.sum(x, axis=0))
"""
    program = Program.parse(source)
    assert program is not None
    descriptions = {e.description: e.source for e in edits(program, ["pointer-drift"])}
    rebased = next(text for d, text in descriptions.items() if "out_ptr_at = out_ptr + ..." in d)
    assert "out_ptr_at = out_ptr + row\n        tl.store(out_ptr_at, tl.sum(x, axis=0))" in rebased
    assert any("out_ptr += 1" in text for text in descriptions.values())


@pytest.mark.parametrize(
    "advance",
    [
        "a_ptrs += BLOCK_K * stride_ak",  # a fixed step
        "a_ptrs = a_ptr + k_next * stride_ak",  # re-based on every iteration
    ],
)
def test_pointers_advanced_by_a_fixed_step_or_rebased_are_left(advance: str) -> None:
    source = (DRIFT / "matmul_drift.py").read_text().replace("a_ptrs += k_next * stride_ak", advance)
    source = source.replace("b_ptrs += k_next * stride_bk", "b_ptrs += BLOCK_K * stride_bk")
    program = Program.parse(source)
    assert program is not None
    assert edits(program, ["pointer-drift"]) == []
