"""The stride kind: `missing-advance`, a loop that moves one operand's pointer along the reduction while its partner,
indexed by the same lanes, is read at the same addresses on every iteration (a bug real models make in matrix
products: `a_ptrs += BLOCK_K * stride_ak` without the matching `b_ptrs += BLOCK_K * stride_bk`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

TASK = textwrap.dedent(
    '''
    """A matrix product."""
    import torch
    import torch.nn as nn

    M = 24
    K = 40
    N = 20


    class Model(nn.Module):
        def forward(self, a, b):
            return a @ b


    def get_inputs():
        return [torch.randn(M, K), torch.randn(K, N)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"M": 24, "K": 40, "N": 20}, {"M": 9, "K": 33, "N": 17}]
    '''
)

STUCK = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _mm(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rows = tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.program_id(1) * BN + tl.arange(0, BN)
        ks = tl.arange(0, BK)
        a_base = a_ptr + rows[:, None] * s_am
        b_base = b_ptr + cols[None, :] * s_bn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a_tile = a_base + ks[None, :] * s_ak
            b_tile = b_base + ks[:, None] * s_bk
            a = tl.load(a_tile, mask=(rows[:, None] < M) & (ks[None, :] < K - k), other=0.0)
            b = tl.load(b_tile, mask=(ks[:, None] < K - k) & (cols[None, :] < N), other=0.0)
            acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)
            a_base += BK * s_ak
        tl.store(c_ptr + rows[:, None] * s_cm + cols[None, :] * s_cn, acc,
                 mask=(rows[:, None] < M) & (cols[None, :] < N))


    class ModelNew(nn.Module):
        def forward(self, a, b):
            M, K = a.shape
            N = b.shape[1]
            c = torch.empty((M, N), device=a.device, dtype=a.dtype)
            grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
            _mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                      c.stride(0), c.stride(1), BM=16, BN=16, BK=8)
            return c
    """
)


def test_missing_advance_moves_the_partner_by_its_own_stride_after_the_other_advance() -> None:
    program = Program.parse(STUCK, TASK)
    assert program is not None
    (edit,) = edits(program, ["missing-advance"])
    assert edit.grounded and "b_tile" in edit.cue
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


def test_a_product_whose_second_operand_never_moves_is_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TASK)
    candidate.write_text(STUCK)
    assert evaluator.evaluate(task, candidate).status == "fail"
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=16))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert accepted == ["missing-advance"], accepted
