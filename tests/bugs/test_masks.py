"""The mask kind: `tile-mask`, a 2-D tile's mask that bounds some of the index vectors its address broadcasts but
not the others (a K loop masked on K only, a store masked on its rows only: a bug real models make in matrix
products), with the bound read from the kernel.; and `loop-tail`, a loop over blocks whose masks bound the index by
another size only (split-K partitions counted twice)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import FIXTURES, offline_repair

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.evaluate import EvalOptions, Evaluator
from kope.repair.search import SearchConfig

TASK = textwrap.dedent(
    '''
    """A matrix product."""
    import torch
    import torch.nn as nn

    M = 40
    K = 24
    N = 20


    class Model(nn.Module):
        def forward(self, a, b):
            return a @ b


    def get_inputs():
        return [torch.randn(M, K), torch.randn(K, N)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"M": 40, "K": 24, "N": 20}, {"M": 17, "K": 9, "N": 33}]
    '''
)

K_ONLY = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid = tl.program_id(0)
        n_blocks = tl.cdiv(N, BN)
        rm = (pid // n_blocks) * BM + tl.arange(0, BM)
        rn = (pid % n_blocks) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(a_ptrs, mask=rk[None, :] < K - k0, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < K - k0, other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
            a_ptrs += BK * sak
            b_ptrs += BK * sbk
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=rm[:, None] < M)


    class ModelNew(nn.Module):
        def forward(self, a, b):
            M, K = a.shape
            N = b.shape[1]
            c = torch.empty((M, N), device=a.device, dtype=torch.float32)
            grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
            _mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                      BM=16, BN=16, BK=16)
            return c
    """
)


def test_tile_mask_completes_every_tile_mask_with_the_kernels_bounds(evaluator: Evaluator, tmp_path: Path) -> None:
    """The loads bound K only, the store the rows only: the rows' bound is read from the store's comparison, the
    columns' from the block count (`tl.cdiv(N, BN)`). One grounded edit completes all three; the completed kernel
    is right on every case and has nothing left to complete."""
    program = Program.parse(K_ONLY, TASK)
    assert program is not None
    made = edits(program, ["tile-mask"])
    assert made[0].grounded and made[0].description == "every tile mask completed (lines 20, 21, 25)"
    assert [e.description for e in made[1:]] == [
        "mask `rk[None, :] < K - k0` -> `(rk[None, :] < K - k0) & (rm[:, None] < M)`",
        "mask `rk[:, None] < K - k0` -> `(rk[:, None] < K - k0) & (rn[None, :] < N)`",
        "mask `rm[:, None] < M` -> `(rm[:, None] < M) & (rn[None, :] < N)`",
    ]
    assert not any(e.grounded for e in made[1:])
    fixed = Program.parse(made[0].source, TASK)
    assert fixed is not None and edits(fixed, ["tile-mask"]) == []
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TASK)
    candidate.write_text(made[0].source)
    assert evaluator.evaluate(task, candidate, options=EvalOptions(trials=1)).status == "pass"


def test_tile_mask_leaves_one_dimensional_and_fully_masked_accesses_alone() -> None:
    """A mask that bounds every broadcast index through names (`ok = row_ok[:, None] & col_ok[None, :]`) and a
    1-D access are not tiles short of a clause."""
    whole = K_ONLY.replace(
        "tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=rm[:, None] < M)",
        "row_ok = rm < M\n    col_ok = rn < N\n    ok = row_ok[:, None] & col_ok[None, :]\n"
        "    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=ok)",
    )
    program = Program.parse(whole, TASK)
    assert program is not None
    assert all("tl.store" not in e.description and "ok" not in e.description for e in edits(program, ["tile-mask"]))


TAIL_TASK = textwrap.dedent(
    '''
    """Row sums of a matrix."""
    import torch
    import torch.nn as nn

    rows = 8
    cols = 300


    class Model(nn.Module):
        def forward(self, x):
            return x.sum(dim=1)


    def get_inputs():
        return [torch.randn(rows, cols)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"rows": 8, "cols": 300}, {"rows": 3, "cols": 97}]
    '''
)

SPLIT_K = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _partial_sums(x_ptr, out_ptr, K, part, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        piece = tl.program_id(1)
        lanes = tl.arange(0, BLOCK)
        start = piece * part
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for k in range(0, part, BLOCK):
            cols = start + k + lanes
            keep = cols < K
            acc += tl.load(x_ptr + row * K + cols, mask=keep, other=0.0)
        tl.atomic_add(out_ptr + row, tl.sum(acc, axis=0))


    class ModelNew(nn.Module):
        def forward(self, x):
            x = x.contiguous()
            rows, cols = x.shape
            pieces = 3
            part = triton.cdiv(cols, pieces)
            out = torch.zeros(rows, device=x.device, dtype=x.dtype)
            _partial_sums[(rows, pieces)](x, out, cols, part, BLOCK=32)
            return out
    """
)


def test_loop_tail_bounds_the_last_block_by_the_loop_own_stop() -> None:
    program = Program.parse(SPLIT_K, TAIL_TASK)
    assert program is not None
    (edit,) = edits(program, ["loop-tail"])
    assert "keep = (cols < K) & ((k + lanes) < part)" in edit.source and edit.cue
    bounded = SPLIT_K.replace("keep = cols < K", "keep = (cols < K) & (k + lanes < part)")
    assert edits(Program.parse(bounded, TAIL_TASK) or program, ["loop-tail"]) == []
    whole = SPLIT_K.replace("range(0, part, BLOCK)", "range(0, K, BLOCK)").replace("start + k", "k")
    assert edits(Program.parse(whole, TAIL_TASK) or program, ["loop-tail"]) == []


def test_a_split_k_sum_counting_its_partitions_overlap_twice_is_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TAIL_TASK)
    candidate.write_text(SPLIT_K)
    assert evaluator.evaluate(task, candidate).status == "fail"  # 300 columns in parts of 100: blocks of 32 overlap
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=16))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert accepted == ["loop-tail"], accepted


TRIU_TASK = (FIXTURES / "masks" / "triu_matmul_task.py").read_text()
TRIU_LOWER = (FIXTURES / "masks" / "triu_matmul_lower.py").read_text()


def test_compare_reverse_turns_tile_index_comparisons_and_the_reference_triangle_grounds_it() -> None:
    program = Program.parse(TRIU_LOWER, TRIU_TASK)
    assert program is not None
    made = edits(program, ["compare-reverse"])
    assert [e.description.split(" -> ")[1] for e in made] == [
        "`rows[:, None] <= ks[None, :]`",
        "`ks[:, None] >= cols[None, :]`",
        "`rows[:, None] >= cols[None, :]`",
    ]  # index against a bound (`rows[:, None] < N`) is compare-flip's, not this one's
    assert all(e.grounded and e.label == "mask-off-by-one" for e in made)
    square = Program.parse(TRIU_LOWER, TRIU_TASK.replace("torch.triu(", "(").replace("torch.triu", "torch.abs"))
    assert square is not None
    assert [e.grounded for e in edits(square, ["compare-reverse"])] == [False, False, False]


def test_a_triangle_kept_the_wrong_way_round_is_repaired_offline(evaluator: Evaluator, tmp_path: Path) -> None:
    status, fixed, accepted = offline_repair(evaluator, tmp_path, TRIU_TASK, TRIU_LOWER, 6)
    assert status == "repaired", accepted
    assert "(rows[:, None] <= ks[None, :])" in fixed
    assert accepted == ["compare-reverse"]


MM_TASK = (Path(__file__).parents[1] / "fixtures" / "findings" / "mm_task.py").read_text()
MM_MOVING = (
    (Path(__file__).parents[1] / "fixtures" / "findings" / "mm_stuck.py")
    .read_text()
    .replace("        a_base += BK * s_ak\n", "        a_base += BK * s_ak\n        b_base += BK * s_bk\n")
)
"""A matrix product whose pointers move along K on every block: its lanes `ks` start at 0 on each block."""
WHOLE_K = MM_MOVING.replace("K - k)", "K)")
"""`ks < K`: right on the first block, and past K on the last where K is not a multiple of the block."""
LOOP_ONLY = MM_MOVING.replace("range(0, K, BK)", "range(0, tl.cdiv(K, BK))").replace("K - k)", "(k + 1) * BK)")
"""A loop counted in blocks whose masks read only the loop (`ks < (k + 1) * BK`: always true)."""


def test_block_tail_bounds_a_block_lanes_by_what_is_left_of_the_size() -> None:
    program = Program.parse(WHOLE_K, MM_TASK)
    assert program is not None and "K - k" not in WHOLE_K
    (edit,) = edits(program, ["block-tail"])
    assert edit.grounded and edit.source == MM_MOVING.replace("K - k)", "K - k)")
    counted = Program.parse(LOOP_ONLY, MM_TASK)
    assert counted is not None
    (edit,) = edits(counted, ["block-tail"])
    assert edit.source.count("< K - k * BK)") == 2 and "(k + 1) * BK" not in edit.source
    for right in (MM_MOVING, edit.source):
        assert edits(Program.parse(right, MM_TASK) or program, ["block-tail"]) == [], "what is left is right"


def test_block_tail_leaves_lanes_the_loop_moves_and_inlines_a_mask_bound_before_the_loop() -> None:
    loop = "    for k in range(0, K, BK):\n"
    absolute = WHOLE_K.replace(loop, loop + "        ks = k + ks\n")
    assert edits(Program.parse(absolute, MM_TASK) or Program.parse(WHOLE_K), ["block-tail"]) == []
    before = WHOLE_K.replace("    acc = tl.zeros(", "    k_ok = ks[None, :] < K\n    acc = tl.zeros(").replace(
        "(ks[None, :] < K)", "k_ok"
    )
    program = Program.parse(before, MM_TASK)
    assert program is not None
    (edit,) = edits(program, ["block-tail"])
    assert "mask=(rows[:, None] < M) & (ks[None, :] < K - k)" in edit.source, "this block's own bound, inline"
    assert "(ks[:, None] < K - k) & (cols[None, :] < N)" in edit.source and "k_ok = ks[None, :] < K\n" in edit.source
    doubled = WHOLE_K.replace("(ks[None, :] < K)", "(ks[None, :] < K) & (ks[None, :] < K - k)")
    (edit,) = edits(Program.parse(doubled, MM_TASK) or program, ["block-tail"])
    assert "(ks[None, :] < K) & (ks[None, :] < K - k)" in edit.source, "a mask that holds a right bound is left"
    ends = WHOLE_K.replace(loop, loop + "        k_end = min(k + BK, K)\n").replace("< K)", "< k_end)")
    (edit,) = edits(Program.parse(ends, MM_TASK) or program, ["block-tail"])
    assert edit.source.count("< K - k)") == 2, "an end of the block is a position, not what is left of K"
    left = WHOLE_K.replace(loop, loop + "        k_left = min(BK, K - k)\n").replace("< K)", "< k_left)")
    assert edits(Program.parse(left, MM_TASK) or program, ["block-tail"]) == [], "read on numbers: right"
    empty = WHOLE_K.replace("tl.arange(0, BK)", "tl.arange(0, 0)").replace("range(0, K, BK)", "range(0, K, 0)")
    assert [e.operator for e in edits(Program.parse(empty, MM_TASK) or program, ["block-tail"])] == ["block-tail"]


def test_a_product_reading_past_k_on_its_last_block_is_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(MM_TASK)
    candidate.write_text(LOOP_ONLY)
    assert evaluator.evaluate(task, candidate).status == "fail"  # K = 33 in blocks of 8
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=16))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert accepted == ["block-tail"], accepted
