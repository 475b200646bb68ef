"""Integer arithmetic real models get wrong (kope.bugs.arith): a pooled size counted with a ceiling division where
the reference's pooling drops the window that does not fit."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import verdicts

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.bugs.reference import pool_ceil_modes
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

POOL_TASK = textwrap.dedent(
    '''
    """Max pooling of each row's windows, then their mean."""
    import torch
    import torch.nn as nn

    batch_size = 4
    length = 40


    class Model(nn.Module):
        def __init__(self, window):
            super().__init__()
            self.pool = nn.MaxPool1d(kernel_size=window{ceil})

        def forward(self, x):
            return self.pool(x.unsqueeze(1)).squeeze(1).mean(dim=1)


    def get_inputs():
        return [torch.randn(batch_size, length)]


    def get_init_inputs():
        return [3]


    def get_cases():
        return [{{"batch_size": 4, "length": 40}}, {{"batch_size": 3, "length": 61}}]
    '''
)

POOL_KERNEL = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _pool_mean_kernel(x_ptr, out_ptr, L, K, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        windows = (L + K - 1) // K
        offs = tl.arange(0, BLOCK)
        keep = offs < windows
        best = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
        for k in range(K):
            pos = offs * K + k
            v = tl.load(x_ptr + row * L + pos, mask=keep & (pos < L), other=float("-inf"))
            best = tl.maximum(best, v)
        total = tl.sum(tl.where(keep, best, 0.0), axis=0)
        tl.store(out_ptr + row, total / windows)


    class ModelNew(nn.Module):
        def __init__(self, window):
            super().__init__()
            self.window = window

        def forward(self, x):
            x = x.contiguous()
            rows, length = x.shape
            out = torch.empty(rows, device=x.device, dtype=x.dtype)
            block = triton.next_power_of_2(triton.cdiv(length, self.window))
            _pool_mean_kernel[(rows,)](x, out, length, self.window, BLOCK=block)
            return out
    """
)


def test_pool_ceil_modes_read_modules_and_functions() -> None:
    assert pool_ceil_modes(POOL_TASK.format(ceil="")) == [False]
    assert pool_ceil_modes(POOL_TASK.format(ceil=", ceil_mode=True")) == [True]
    functional = "class Model:\n    def forward(self, x):\n        return F.avg_pool2d(x, 2)\n"
    assert pool_ceil_modes(functional) == [False]
    adaptive = "class Model:\n    def __init__(self):\n        self.p = nn.AdaptiveAvgPool3d((1, 1, 1))\n"
    assert pool_ceil_modes(adaptive) == []


def test_pool_floor_offers_floor_divisions_only_where_the_reference_drops_partial_windows() -> None:
    program = Program.parse(POOL_KERNEL, POOL_TASK.format(ceil=""))
    assert program is not None
    made = edits(program, ["pool-floor"])
    assert [e.source.count("((L) // (K))") for e in made] == [1, 0], [e.description for e in made]
    assert made[0].grounded and made[0].cue
    # the host's count of windows is a pooled size too; a division by a block size is not
    assert "block = triton.next_power_of_2(((length) // (self.window)))" in made[1].source
    blocked = Program.parse(POOL_KERNEL.replace("(L + K - 1) // K", "tl.cdiv(L, BLOCK)"), POOL_TASK.format(ceil=""))
    assert blocked is not None and len(edits(blocked, ["pool-floor"])) == 1
    ceil = Program.parse(POOL_KERNEL, POOL_TASK.format(ceil=", ceil_mode=True"))
    assert ceil is not None and edits(ceil, ["pool-floor"]) == []
    unpooled = Program.parse(POOL_KERNEL, "class Model:\n    def forward(self, x):\n        return x.mean(dim=1)\n")
    assert unpooled is not None and edits(unpooled, ["pool-floor"]) == []


def test_every_pooled_size_divided_by_one_window_is_floored_at_once() -> None:
    three = POOL_KERNEL.replace(
        "windows = (L + K - 1) // K", "windows = (L + K - 1) // K\n    unused_h = (L + (K - 1)) // K"
    )
    program = Program.parse(three, POOL_TASK.format(ceil=""))
    assert program is not None
    made = edits(program, ["pool-floor"])
    assert made[0].source.count("((L) // (K))") == 2 and made[0].grounded
    assert len(made) == 4 and not any(e.grounded for e in made[1:3]), [e.description for e in made]


def test_a_pooled_mean_over_a_partial_window_is_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(POOL_TASK.format(ceil=""))
    candidate.write_text(POOL_KERNEL)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert accepted == ["pool-floor"], accepted
    # the control: where the reference keeps the partial window, the same kernel is right as it is
    task.write_text(POOL_TASK.format(ceil=", ceil_mode=True"))
    assert evaluator.evaluate(task, candidate).status == "pass"


ROWS_TASK = textwrap.dedent(
    '''
    """Each row scaled by its maximum."""
    import torch
    import torch.nn as nn

    rows = 5
    cols = 300


    class Model(nn.Module):
        def forward(self, x):
            return x / x.abs().amax(dim=1, keepdim=True)


    def get_inputs():
        return [torch.randn(rows, cols)]


    def get_init_inputs():
        return []
    '''
)

ONE_BLOCK = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _scaled_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        top = tl.max(tl.abs(x), axis=0)
        tl.store(out_ptr + row * n_cols + cols, x / top, mask=mask)


    class ModelNew(nn.Module):
        def forward(self, x):
            x = x.contiguous()
            rows, n_cols = x.shape
            out = torch.empty_like(x)
            _scaled_rows[(rows,)](x, out, n_cols, BLOCK=128)
            return out
    """
)
"""One block of 128 lanes per row, masked by the row's length: a row longer than 128 is cut off."""


def test_a_fixed_block_that_must_cover_the_row_becomes_the_rows_next_power_of_two() -> None:
    program = Program.parse(ONE_BLOCK, ROWS_TASK)
    assert program is not None
    (made,) = edits(program, ["whole-block"])
    assert "_scaled_rows[(rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))" in made.source
    assert "cols < n_cols" in made.cue
    # a block that tiles the row (a program id or a loop over blocks) is not the row's whole, unless each program
    # reduces its own tile (scaled by the tile's maximum, not the row's): then it is offered, with that cue
    tiled = ONE_BLOCK.replace("cols = tl.arange(0, BLOCK)", "cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)")
    (reduced,) = edits(Program.parse(tiled, ROWS_TASK), ["whole-block"])  # type: ignore[arg-type]
    assert "BLOCK=triton.next_power_of_2(n_cols)" in reduced.source and "reduces its own tile" in reduced.cue
    elementwise = tiled.replace("top = tl.max(tl.abs(x), axis=0)", "top = 2.0")
    looped = ONE_BLOCK.replace(
        "row = tl.program_id(0)", "row = tl.program_id(0)\n    for c0 in range(0, n_cols, BLOCK):\n        pass"
    )
    for other in (elementwise, looped, ONE_BLOCK.replace("BLOCK=128", "BLOCK=triton.next_power_of_2(n_cols)")):
        parsed = Program.parse(other, ROWS_TASK)
        assert parsed is not None and edits(parsed, ["whole-block"]) == []


def test_blocks_cut_off_at_several_launches_are_covered_in_one_version_too() -> None:
    """Two launches with a fixed block (the statistics, then the normalisation): each alone leaves the other's rows
    cut off, so the edit that covers both comes first, then each alone."""
    twice = ONE_BLOCK.replace(
        "        return out\n",
        "        _scaled_rows[(rows,)](out, out, n_cols, BLOCK=128)\n        return out\n",
    )
    parsed = Program.parse(twice, ROWS_TASK)
    assert parsed is not None
    both, *alone = edits(parsed, ["whole-block"])
    assert both.source.count("BLOCK=triton.next_power_of_2(n_cols)") == 2 and "2 launches" in both.description
    assert [e.source.count("BLOCK=triton.next_power_of_2(n_cols)") for e in alone] == [1, 1]


def test_a_block_masked_by_a_size_the_kernel_computes_covers_that_size() -> None:
    """`n = rows_per * n_cols` in the kernel, masked by `cols < n`: the launch's block becomes the next power of two
    of what it passes for those parameters."""
    computed = (
        ONE_BLOCK.replace("def _scaled_rows(x_ptr, out_ptr, n_cols,", "def _scaled_rows(x_ptr, out_ptr, n_cols, one,")
        .replace("mask = cols < n_cols", "n = n_cols * one\n    mask = cols < n")
        .replace("(x, out, n_cols, BLOCK=128)", "(x, out, n_cols, 1, BLOCK=128)")
    )
    parsed = Program.parse(computed, ROWS_TASK)
    assert parsed is not None
    (made,) = edits(parsed, ["whole-block"])
    assert "(x, out, n_cols, 1, BLOCK=triton.next_power_of_2((n_cols) * (1)))" in made.source


def test_rows_each_program_normalises_by_its_own_tile_are_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    """A log-softmax whose programs tile the row and each take the max and sum of its own tile only (the grid
    counts tiles with the block it is given): one block over the row, and the grid's axis is one program."""
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(ROWS_TASK.replace("x / x.abs().amax(dim=1, keepdim=True)", "torch.log_softmax(x, dim=1)"))
    candidate.write_text(
        ONE_BLOCK.replace("cols = tl.arange(0, BLOCK)", "cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)")
        .replace("other=0.0)", "other=-float('inf'))")
        .replace("top = tl.max(tl.abs(x), axis=0)", "top = tl.log(tl.sum(tl.exp(x - tl.max(x, axis=0)), axis=0))")
        .replace("x / top", "x - tl.max(x, axis=0) - top")
        .replace("_scaled_rows[(rows,)](x, out, n_cols, BLOCK=128)",
                 "_scaled_rows[lambda m: (rows, triton.cdiv(n_cols, m['BLOCK']))](x, out, n_cols, BLOCK=8)")
    )  # fmt: skip
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "BLOCK=triton.next_power_of_2(n_cols)" in (tmp_path / "fixed.py").read_text()


def test_a_row_cut_off_by_its_block_is_repaired(evaluator: Evaluator, tmp_path: Path) -> None:
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(ROWS_TASK)
    candidate.write_text(ONE_BLOCK)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "BLOCK=triton.next_power_of_2(n_cols)" in (tmp_path / "fixed.py").read_text()


SPLIT_ROWS = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        start = tl.program_id(1) * BLOCK
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for k in range(start, n_cols, BLOCK):
            cols = k + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(acc, axis=0))


    class ModelNew(nn.Module):
        def forward(self, x):
            x = x.contiguous()
            rows, n_cols = x.shape
            out = torch.empty(rows, device=x.device, dtype=x.dtype)
            _row_sum[(rows, triton.cdiv(n_cols, 32))](x, out, n_cols, BLOCK=32)
            return out
    """
)
"""Row sums split across a second grid axis with no atomic add: every program of a row writes its own suffix sum,
the last one's winning."""


def test_a_grid_axis_no_store_reaches_is_launched_once(evaluator: Evaluator, tmp_path: Path) -> None:
    parsed = Program.parse(SPLIT_ROWS, ROWS_TASK)
    assert parsed is not None
    (made,) = edits(parsed, ["axis-once"])
    assert "_row_sum[(rows, 1)](x, out, n_cols, BLOCK=32)" in made.source and "program_id(1)" in made.cue
    kept = Program.parse(SPLIT_ROWS.replace("out_ptr + row,", "out_ptr + row + start * 0,"), ROWS_TASK)
    assert kept is not None and edits(kept, ["axis-once"]) == []  # the store reads the axis: not this bug
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(ROWS_TASK.replace("x / x.abs().amax(dim=1, keepdim=True)", "x.sum(dim=1)"))
    candidate.write_text(SPLIT_ROWS)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "_row_sum[(rows, 1)]" in (tmp_path / "fixed.py").read_text()


TILED_SOFTMAX = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.autotune(
        configs=[triton.Config({"BLOCK_M": 4, "BLOCK_N": 64}), triton.Config({"BLOCK_M": 2, "BLOCK_N": 32})],
        key=["n_cols"],
    )
    @triton.jit
    def _softmax_tiles(x_ptr, out_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=1)[:, None])
        total = tl.sum(e, axis=1)
        tl.store(out_ptr + rows[:, None] * n_cols + cols[None, :], e / total[:, None], mask=mask)


    class ModelNew(nn.Module):
        def forward(self, x):
            n_rows, n_cols = x.shape
            out = torch.empty_like(x)
            grid = lambda meta: (triton.cdiv(n_rows, meta["BLOCK_M"]), triton.cdiv(n_cols, meta["BLOCK_N"]))
            _softmax_tiles[grid](x, out, n_rows, n_cols)
            return out
    """
)
"""A row softmax on tiles of two axes: each program normalises its own columns' tile, not the row."""

SOFTMAX_ROWS_TASK = ROWS_TASK.replace("x / x.abs().amax(dim=1, keepdim=True)", "torch.softmax(x, dim=1)")


def test_a_tile_normalised_along_an_axis_the_grid_splits_covers_that_axis(evaluator: Evaluator, tmp_path: Path) -> None:
    """The block is an autotune's: taken out of every config and given at the launch as the row's next power of two
    (grounded: the tile is scaled by its own reduction along the axis the grid splits). Wrong before, right after."""
    program = Program.parse(TILED_SOFTMAX, SOFTMAX_ROWS_TASK)
    assert program is not None
    (made,) = edits(program, ["whole-block"])
    assert made.grounded and "reduces its own tile" in made.cue
    assert '{"BLOCK_M": 4}' in made.source and '"BLOCK_N": 64' not in made.source
    assert "(x, out, n_rows, n_cols, BLOCK_N=triton.next_power_of_2(n_cols))" in made.source
    task = tmp_path / "softmax_rows.py"
    task.write_text(SOFTMAX_ROWS_TASK)
    assert verdicts(evaluator, task, [TILED_SOFTMAX, made.source], tmp_path) == ["fail", "pass"]
    # partial sums added atomically across programs are a right design: no edit
    atomic = TILED_SOFTMAX.replace("tl.store(out_ptr", "tl.atomic_add(out_ptr")
    parsed = Program.parse(atomic, SOFTMAX_ROWS_TASK)
    assert parsed is not None and edits(parsed, ["whole-block"]) == []
