"""The launch grid kind: a grouped launch order whose last group is not capped (a bug real models make when they
write the grouped matmul order from memory), repaired offline through the real evaluator (small shapes)."""

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
    K = 16
    N = 24


    class Model(nn.Module):
        def forward(self, a, b):
            return a @ b


    def get_inputs():
        return [torch.randn(M, K), torch.randn(K, N)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"M": 40, "K": 16, "N": 24}, {"M": 72, "K": 16, "N": 16}]
    '''
)

UNCAPPED = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _mm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        pid_in_group = pid % num_pid_in_group
        pid_m = first_pid_m + (pid_in_group % GROUP_M)
        pid_n = pid_in_group // GROUP_M
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rows[:, None] * K + (k0 + ks)[None, :],
                        mask=(rows[:, None] < M) & ((k0 + ks)[None, :] < K), other=0.0)
            b = tl.load(b_ptr + (k0 + ks)[:, None] * N + cols[None, :],
                        mask=((k0 + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


    class ModelNew(nn.Module):
        def forward(self, a, b):
            a, b = a.contiguous(), b.contiguous()
            M, K = a.shape
            N = b.shape[1]
            c = torch.empty((M, N), device=a.device, dtype=torch.float32)
            grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
            _mm[grid](a, b, c, M, N, K, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
            return c
    """
)


def test_group_cap_caps_the_group_size_in_both_operations_only_where_it_is_not_capped() -> None:
    program = Program.parse(UNCAPPED, TASK)
    assert program is not None
    made = edits(program, ["group-cap"])
    assert [e.description for e in made] == [
        "grouped launch order: the group size `GROUP_M` -> `tl.minimum(num_pid_m - first_pid_m, GROUP_M)`"
    ]
    assert made[0].cue and made[0].source.count("tl.minimum(num_pid_m - first_pid_m, GROUP_M)") == 2
    assert made[0].grounded, "a grid of one program per tile: rows x columns"
    capped = Program.parse(made[0].source, TASK)
    assert capped is not None and edits(capped, ["group-cap"]) == []
    spelled = UNCAPPED.replace("num_pid_m = tl.cdiv(M, BLOCK_M)", "num_pid_m = (M + BLOCK_M - 1) // BLOCK_M")
    assert spelled != UNCAPPED, "the row blocks counted with a ceiling division written out"
    by_hand = Program.parse(spelled, TASK)
    assert by_hand is not None and [e.description for e in edits(by_hand, ["group-cap"])] == [made[0].description]


def test_group_cap_is_grounded_only_where_the_grid_runs_one_program_per_tile() -> None:
    """Rounded up to whole groups, the uncapped order covers every tile (the programs past the rows are masked):
    still offered, not grounded. A grid function defined in the host and a count bound to a name are read through."""
    padded = UNCAPPED.replace(
        "grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)",
        "grid = (triton.cdiv(triton.cdiv(M, 16), 2) * 2 * triton.cdiv(N, 16),)",
    )
    in_function = UNCAPPED.replace(
        "grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)",
        "rows = triton.cdiv(M, 16)\n"
        "        def grid(meta):\n"
        "            return (rows * triton.cdiv(N, meta['BLOCK_N']),)",
    )
    assert padded != UNCAPPED and in_function != UNCAPPED
    grounded = []
    for source in (padded, in_function):
        program = Program.parse(source, TASK)
        assert program is not None
        grounded.append([e.grounded for e in edits(program, ["group-cap"])])
    assert grounded == [[False], [True]]


def test_an_uncapped_grouped_order_is_repaired_offline(evaluator: Evaluator, tmp_path: Path) -> None:
    """40 rows are 3 row blocks of 16: with groups of 2 the last group has one row block, so one tile is never
    written and another twice. The task's second case (72 rows: 5 row blocks) shows it too."""
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TASK)
    candidate.write_text(UNCAPPED)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "tl.minimum(num_pid_m - first_pid_m, GROUP_M)" in (tmp_path / "fixed.py").read_text()


def test_the_bench_injects_it_and_the_search_edit_takes_it_back() -> None:
    from kope.bugs.mutation import mutants

    capped = UNCAPPED.replace("pid_m = first_pid_m + (pid_in_group % GROUP_M)", "")
    capped = capped.replace(
        "pid_n = pid_in_group // GROUP_M",
        "group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)\n"
        "    pid_m = first_pid_m + (pid_in_group % group_size_m)\n"
        "    pid_n = pid_in_group // group_size_m",
    )
    injected = [m.source for m in mutants(capped, "group-uncapped")]
    assert len(injected) == 1 and "group_size_m = GROUP_M" in injected[0]
    program = Program.parse(injected[0], TASK)
    assert program is not None and len(edits(program, ["group-cap"])) == 1


FIXED_GRID = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 32})], key=["n"])
    @triton.jit
    def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            n = x.numel()
            grid = (triton.cdiv(n, 64),)
            _double[grid](x, y, n)
            return y
    """
)

DOUBLE_TASK = textwrap.dedent(
    '''
    """Twice a vector."""
    import torch
    import torch.nn as nn

    N = 300


    class Model(nn.Module):
        def forward(self, x):
            return x * 2.0


    def get_inputs():
        return [torch.randn(N)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"N": 300}, {"N": 1000}]
    '''
)


def test_autotune_grid_reads_the_block_the_config_gives(evaluator: Evaluator, tmp_path: Path) -> None:
    """The grid divides by 64, the configs give BLOCK 64 or 32: under the second, half the vector is never written
    (kope's interpreter runs each config in its own trial). Repaired by a grid that reads META['BLOCK']."""
    program = Program.parse(FIXED_GRID, DOUBLE_TASK)
    assert program is not None
    made = edits(program, ["autotune-grid"])
    assert len(made) == 1 and made[0].cue
    assert "grid = lambda META: (triton.cdiv(n, META['BLOCK']),)" in made[0].source
    single = Program.parse(FIXED_GRID.replace(', triton.Config({"BLOCK": 32})', ""), DOUBLE_TASK)
    assert single is not None and edits(single, ["autotune-grid"]) == []  # one config: the literal is its block
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(DOUBLE_TASK)
    candidate.write_text(FIXED_GRID)
    judged = evaluator.evaluate(task, candidate, options=EvalOptions(trials=2))
    assert judged.status == "fail"
    wrong, right = "autotune _double: wrong under config #1 (BLOCK=32", "right under #0 (BLOCK=64"
    notes = [" ".join(case.notes) for case in judged.cases]
    assert all(wrong in n and right in n for n in notes), notes
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "META['BLOCK']" in (tmp_path / "fixed.py").read_text()


def test_autotune_grid_reads_configs_bound_to_a_module_name() -> None:
    """`configs=CONFIGS` with `CONFIGS = [...]` above it (how most real kernels write a longer list): the blocks the
    configs give are read through the name, so the fixed grid gets the same edit."""
    spelled = FIXED_GRID.replace(
        '@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 32})], key=["n"])',
        'CONFIGS = [triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 32})]\n\n\n'
        '@triton.autotune(configs=CONFIGS, key=["n"])',
    )
    program = Program.parse(spelled, DOUBLE_TASK)
    assert program is not None and "configs=CONFIGS" in spelled
    made = edits(program, ["autotune-grid"])
    assert len(made) == 1 and "grid = lambda META: (triton.cdiv(n, META['BLOCK']),)" in made[0].source


TWO_LAUNCHES = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.autotune(
        configs=[triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}), triton.Config({"BLOCK_M": 32, "BLOCK_N": 16})],
        key=["M", "N"],
    )
    @triton.jit
    def _double(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        at = rows[:, None] * N + cols[None, :]
        tl.store(y_ptr + at, tl.load(x_ptr + at, mask=mask) * 2.0, mask=mask)


    @triton.autotune(
        configs=[triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}), triton.Config({"BLOCK_M": 32, "BLOCK_N": 16})],
        key=["M", "N"],
    )
    @triton.jit
    def _plus_one(y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        at = rows[:, None] * N + cols[None, :]
        tl.store(z_ptr + at, tl.load(y_ptr + at, mask=mask) + 1.0, mask=mask)


    class ModelNew(nn.Module):
        def forward(self, x):
            M, N = x.shape
            y = torch.empty_like(x)
            z = torch.empty_like(x)
            grid_m = triton.cdiv(M, 16)
            grid_n = triton.cdiv(N, 32)
            _double[(grid_m, grid_n)](x, y, M, N)
            _plus_one[(grid_m, grid_n)](y, z, M, N)
            return z
    """
)


TWICE_PLUS_ONE_TASK = textwrap.dedent(
    '''
    """Twice a matrix, plus one."""
    import torch
    import torch.nn as nn

    M = 40
    N = 72


    class Model(nn.Module):
        def forward(self, x):
            return x * 2.0 + 1.0


    def get_inputs():
        return [torch.randn(M, N)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"M": 40, "N": 72}, {"M": 17, "N": 33}]
    '''
)


def test_autotune_grid_reads_host_names_and_the_axis_each_block_tiles(evaluator: Evaluator, tmp_path: Path) -> None:
    """Both launches run on `(grid_m, grid_n)`, names the host binds to `cdiv(M, 16)` and `cdiv(N, 32)`; the configs
    give BLOCK_M and BLOCK_N both 16 and 32. The reading where each axis divides by the block its program id is
    multiplied by is grounded and first, and both launches at once are offered too (one alone leaves the other
    launch wrong under the second config)."""
    program = Program.parse(TWO_LAUNCHES, TWICE_PLUS_ONE_TASK)
    assert program is not None
    made = edits(program, ["autotune-grid"])
    grounded = [e for e in made if e.grounded]
    wanted = "lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))"
    assert len(grounded) == 3 and all(wanted in e.source for e in grounded), [e.description for e in made]
    together = next(e for e in grounded if "2 launches" in e.description)
    assert together.source.count(wanted) == 2
    crossed = [e for e in made if not e.grounded and "META['BLOCK_N']), triton.cdiv(N, META['BLOCK_M'])" in e.source]
    assert crossed, "the other readings stay offered, not grounded"
    task, start, mended = tmp_path / "task.py", tmp_path / "start.py", tmp_path / "mended.py"
    task.write_text(TWICE_PLUS_ONE_TASK)
    start.write_text(TWO_LAUNCHES)
    mended.write_text(together.source)
    assert evaluator.evaluate(task, start, options=EvalOptions(trials=2)).status == "fail"  # the second config
    assert evaluator.evaluate(task, mended, options=EvalOptions(trials=2)).status == "pass"


# -- tile-grid: a grid that does not count the kernel's tiles ----------------------------------

ROW_SCALE_TASK = textwrap.dedent(
    '''
    """Each row of a matrix times its own factor."""
    import torch
    import torch.nn as nn

    R = 70
    C = 40


    class Model(nn.Module):
        def forward(self, s, x):
            return s[:, None] * x


    def get_inputs():
        return [torch.randn(R), torch.randn(R, C)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"R": 70, "C": 40}, {"R": 33, "C": 100}]
    '''
)

ROW_SCALE = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.autotune(
        configs=[triton.Config({"ROWS": 32, "COLS": 8, "VEC": 2}), triton.Config({"ROWS": 16, "COLS": 8, "VEC": 2})],
        key=["n_rows", "n_cols"],
    )
    @triton.jit
    def _row_scale(s_ptr, x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr, VEC: tl.constexpr):
        pid_c = tl.program_id(0)
        pid_r = tl.program_id(1)
        rows = pid_r * ROWS + tl.arange(0, ROWS)
        cols = pid_c * COLS * VEC + tl.arange(0, COLS * VEC)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        s = tl.load(s_ptr + rows, mask=rows < n_rows, other=0.0)
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
        tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], s[:, None] * x, mask=mask)


    class ModelNew(nn.Module):
        def forward(self, s, x):
            x = x.contiguous()
            n_rows, n_cols = x.shape
            y = torch.empty_like(x)
            row_blocks = triton.cdiv(n_rows, 32)
            col_blocks = triton.cdiv(n_cols, 16)
            grid = (col_blocks, row_blocks)
            _row_scale[grid](s, x, y, n_rows, n_cols)
            return y
    """
)

DOT_PER_OUTPUT_TASK = textwrap.dedent(
    '''
    """A linear layer without bias on a small batch."""
    import torch
    import torch.nn as nn

    B = 6
    K = 40
    N = 10


    class Model(nn.Module):
        def forward(self, x, w):
            return x @ w.t()


    def get_inputs():
        return [torch.randn(B, K), torch.randn(N, K)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"B": 6, "K": 40, "N": 10}, {"B": 3, "K": 17, "N": 7}]
    '''
)

DOT_PER_OUTPUT = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _dot_each(x_ptr, w_ptr, out_ptr, B, N, K, sxb, sxk, swn, swk, BLOCK_K: tl.constexpr):
        pid = tl.program_id(0)
        b = pid // N
        n = pid % N
        if b >= B:
            return
        acc = 0.0
        for k0 in range(0, K, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            xv = tl.load(x_ptr + b * sxb + ks * sxk, mask=ks < K, other=0.0)
            wv = tl.load(w_ptr + n * swn + ks * swk, mask=ks < K, other=0.0)
            acc += tl.sum(xv * wv)
        tl.store(out_ptr + b * N + n, acc)


    class ModelNew(nn.Module):
        def forward(self, x, w):
            B, K = x.shape
            N = w.shape[0]
            out = torch.empty((B, N), device=x.device, dtype=x.dtype)
            grid = (triton.cdiv(B * N, 16),)
            _dot_each[grid](x, w, out, B, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1), BLOCK_K=16)
            return out
    """
)


def test_tile_grid_reads_the_grid_from_the_kernels_tiles() -> None:
    """Rows tiled by an autotuned ROWS (32 or 16) on a grid divided by 32; columns by COLS * VEC (a vectorised
    tile): the grid is rebuilt from the factors that scale each axis's program id, read from the running config."""
    program = Program.parse(ROW_SCALE, ROW_SCALE_TASK)
    assert program is not None
    made = edits(program, ["tile-grid"])
    assert len(made) == 1 and made[0].grounded
    new = "grid = lambda META: (triton.cdiv(n_cols, META['COLS'] * META['VEC']), triton.cdiv(n_rows, META['ROWS']))"
    assert new in made[0].source
    fixed = Program.parse(made[0].source, ROW_SCALE_TASK)
    assert fixed is not None and edits(fixed, ["tile-grid"]) == []
    # the columns tiled from the rows' program id (axis 0's id never read): the kernel's bug, no grid is read from it
    crossed = Program.parse(ROW_SCALE.replace("cols = pid_c * COLS", "cols = pid_r * COLS"), ROW_SCALE_TASK)
    assert crossed is not None and edits(crossed, ["tile-grid"]) == []


VECTOR_TILE = textwrap.dedent(
    """
    import torch
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 128, "VEC": 4}, num_warps=4)], key=["n"])
    @triton.jit
    def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr, VEC: tl.constexpr):
        per_program = BLOCK * VEC
        offs = tl.program_id(0) * per_program + tl.arange(0, BLOCK * VEC)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


    def double(x):
        y = torch.empty_like(x)
        n = x.numel()
        _double[(triton.cdiv(n, 1024),)](x, y, n)
        return y
    """
)


def test_tile_grid_reads_a_tile_named_once_and_a_single_autotuned_config() -> None:
    """`pid * per_program` for `per_program = BLOCK * VEC`, autotuned to one config (128 x 4 = 512) on a grid divided
    by 1024: half the tiles never run. The grid reads the tile from the config, grounded (512 is not 1024)."""
    program = Program.parse(VECTOR_TILE, DOUBLE_TASK)
    assert program is not None
    made = edits(program, ["tile-grid"])
    assert len(made) == 1 and made[0].grounded
    assert "lambda META: (triton.cdiv(n, META['BLOCK'] * META['VEC']),)" in made[0].source
    right = Program.parse(VECTOR_TILE.replace('"BLOCK": 128', '"BLOCK": 256'), DOUBLE_TASK)
    assert right is not None and not any(e.grounded for e in edits(right, ["tile-grid"]))


def test_tile_grid_counts_one_program_per_output_where_the_program_id_is_the_index() -> None:
    """`b = pid // N; n = pid % N`: one program per output element, on a grid divided by the K chunk: the division
    goes. A kernel whose program id starts a block unscaled (`pid + tl.arange`), a grouped order and a grid already
    right are left alone."""
    program = Program.parse(DOT_PER_OUTPUT, DOT_PER_OUTPUT_TASK)
    assert program is not None
    made = edits(program, ["tile-grid"])
    assert [e.description for e in made] == [
        "the grid from the kernel's tiles: `(triton.cdiv(B * N, 16),)` -> `(B * N,)`"
    ]
    assert made[0].grounded
    right = Program.parse(made[0].source, DOT_PER_OUTPUT_TASK)
    assert right is not None and edits(right, ["tile-grid"]) == []
    unscaled = FIXED_GRID.replace("tl.program_id(0) * BLOCK + tl.arange", "tl.program_id(0) + tl.arange")
    for source in (unscaled, UNCAPPED):
        other = Program.parse(source, DOUBLE_TASK)
        assert other is not None and edits(other, ["tile-grid"]) == []


def test_a_grid_short_of_the_tiles_is_repaired_offline(evaluator: Evaluator, tmp_path: Path) -> None:
    """Under the config with ROWS = 16 half the row blocks get no program: repaired by `tile-grid`."""
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(ROW_SCALE_TASK)
    candidate.write_text(ROW_SCALE)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "META['ROWS']" in (tmp_path / "fixed.py").read_text()


GEMM_TASK = (FIXTURES / "grid" / "gemm_task.py").read_text()
GROUPED = (FIXTURES / "grid" / "gemm_grouped_order.py").read_text()
PLAIN = "    pid_n = group_id % num_pid_n\n    pid_m = pid // num_pid_n\n    pid_n = pid % num_pid_n\n"


def test_plain_order_maps_programs_row_major_then_column_major_after_the_tiles_last_assignments() -> None:
    program = Program.parse(GROUPED, GEMM_TASK)
    assert program is not None
    made = edits(program, ["plain-order"])
    assert len(made) == 2 and all(e.cue == "a grouped tile order" for e in made)
    assert PLAIN in made[0].source
    assert "    pid_m = pid % num_pid_m\n" in made[1].source
    # two program axes, or no count of the tiles by ceiling division: nothing to put in order
    two_axes = GROUPED.replace("group_id % num_pid_n", "tl.program_id(1)")
    uncounted = GROUPED.replace("num_pid_n = tl.cdiv(N, BLOCK_N)", "num_pid_n = N // BLOCK_N")
    for source in (two_axes, uncounted):
        other = Program.parse(source, GEMM_TASK)
        assert other is not None and not edits(other, ["plain-order"])


def test_a_broken_grouped_order_is_repaired_offline(evaluator: Evaluator, tmp_path: Path) -> None:
    status, fixed, accepted = offline_repair(evaluator, tmp_path, GEMM_TASK, GROUPED, 8)
    assert status == "repaired", accepted
    assert PLAIN in fixed
    assert accepted == ["plain-order"]


def test_an_output_of_the_dtype_the_error_states_is_allocated_as_the_references(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A helper allocates the output as float16 ("output: dtype float16 where the reference has float32"), after a
    first rule (`tl.cdiv` on the host) hid it: the edit that mends the rule moves the error, and the second edit
    reads the moved error and allocates float32; the version runs right."""
    api = FIXTURES / "api"
    good = (api / "rownorm_good.py").read_text()
    text = (
        good.replace("_row_norm[(n_rows,)]", "_row_norm[(tl.cdiv(n_rows, 1),)]").replace(
            "out = torch.empty_like(x)", "out = make(x)"
        )
        + "\n\ndef make(x):\n    return torch.empty(x.shape, device=x.device, dtype=torch.float16)\n"
    )
    parsed = Program.parse(text.replace("tl.cdiv(n_rows, 1)", "n_rows"), error="output: dtype float16 where the "
                           "reference has float32")  # fmt: skip
    assert parsed is not None
    stated = edits(parsed, ["alloc-dtype"])[0]
    assert stated.grounded and "dtype=torch.float32)" in stated.source
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text((api / "rownorm_task.py").read_text())
    candidate.write_text(text)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    fixed = (tmp_path / "fixed.py").read_text()
    assert "triton.cdiv(n_rows, 1)" in fixed and "dtype=torch.float32)" in fixed
