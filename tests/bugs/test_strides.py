"""The stride kind: `missing-advance`, a loop that moves one operand's pointer along the reduction while its partner,
indexed by the same lanes, is read at the same addresses on every iteration (a bug real models make in matrix
products: `a_ptrs += BLOCK_K * stride_ak` without the matching `b_ptrs += BLOCK_K * stride_bk`)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
