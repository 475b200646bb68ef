"""Masks real models get wrong (kope.bugs.masks): a loop over blocks whose masks bound the index by the tensor's
size only, so that its last block runs past the loop's own range (split-K partitions counted twice)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

TASK = textwrap.dedent(
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
    program = Program.parse(SPLIT_K, TASK)
    assert program is not None
    (edit,) = edits(program, ["loop-tail"])
    assert "keep = (cols < K) & ((k + lanes) < part)" in edit.source and edit.cue
    bounded = SPLIT_K.replace("keep = cols < K", "keep = (cols < K) & (k + lanes < part)")
    assert edits(Program.parse(bounded, TASK) or program, ["loop-tail"]) == []
    whole = SPLIT_K.replace("range(0, part, BLOCK)", "range(0, K, BLOCK)").replace("start + k", "k")
    assert edits(Program.parse(whole, TASK) or program, ["loop-tail"]) == []


def test_a_split_k_sum_counting_its_partitions_overlap_twice_is_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TASK)
    candidate.write_text(SPLIT_K)
    assert evaluator.evaluate(task, candidate).status == "fail"  # 300 columns in parts of 100: blocks of 32 overlap
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=16))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert accepted == ["loop-tail"], accepted
