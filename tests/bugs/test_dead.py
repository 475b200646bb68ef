"""The dead-value operators (kope.bugs.dead): a name computed or taken and never read is put back."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.dead import dead_names
from kope.bugs.edit import Edit, Program, edits
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

HOST = """

class ModelNew(torch.nn.Module):
    def forward(self, x, w):
        out = torch.empty_like(x)
        B, L = x.shape
        _k[(B,)](x, w, out, L, x.stride(0), out.stride(0), 0.125, BLK=256)
        return out
"""


def program(kernel: str) -> Program:
    source = "import torch\nimport triton\nimport triton.language as tl\n\n" + textwrap.dedent(kernel) + HOST
    parsed = Program.parse(source)
    assert parsed is not None
    return parsed


def of(parsed: Program, name: str) -> list[Edit]:
    return edits(parsed, [name])


def new_line(parsed: Program, edit: Edit) -> str:
    for a, b in zip(parsed.text.splitlines(), edit.source.splitlines(), strict=True):
        if a != b:
            return b.strip()
    raise AssertionError("nothing changed")


def test_a_loaded_scale_never_used_goes_back_as_a_factor_of_what_is_stored_and_inside_it() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            b = tl.program_id(0)
            j = tl.arange(0, BLK)
            keep = j < L
            gain = tl.load(w_ptr)
            v = tl.load(x_ptr + b * sx + j, mask=keep, other=0.0)
            squashed = tl.sigmoid(v / temperature)
            tl.store(o_ptr + b * so + j, squashed, mask=keep)
    """)
    (dead,) = dead_names(parsed, parsed.kernels[0])
    assert (dead.name, dead.kind) == ("gain", "value")
    found = of(parsed, "dead-value")
    assert all(e.cue == "`gain` is computed at line 11 but never used" for e in found)
    lines = [new_line(parsed, e) for e in found]
    assert (
        "squashed = tl.sigmoid(v * gain / temperature)" in lines
        or "squashed = tl.sigmoid((v * gain) / temperature)" in lines
    )
    assert "tl.store(o_ptr + b * so + j, (squashed * gain), mask=keep)" in lines
    # the addresses and the mask are not values: no factor lands on them
    assert not any("j * gain" in line or "keep * gain" in line or "sx * gain" in line for line in lines)
    # multiplications are offered before divisions, divisions before sums, sums before differences
    ops = [e.description.rsplit(" ", 2)[-2] for e in found if "made" not in e.description]
    assert ops == sorted(ops, key=["*", "/", "+", "-"].index)


def test_a_converted_value_left_unused_replaces_what_it_was_made_from_after_it() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            b = tl.program_id(0)
            j = tl.arange(0, BLK)
            raw = tl.load(x_ptr + b * sx + j, mask=j < L, other=0.0)
            wide = raw.to(tl.float32)
            total = tl.sum(raw * raw, axis=0) * temperature
            tl.store(o_ptr + b * so, total)
    """)
    found = of(parsed, "dead-value")
    first = found[0]
    assert first.description.startswith("`raw` -> `wide`") and "made from" in first.description
    assert new_line(parsed, first) == "total = tl.sum(wide * raw, axis=0) * temperature"
    everywhere = [e for e in found if "everywhere" in e.description]
    assert [new_line(parsed, e) for e in everywhere] == ["total = tl.sum(wide * wide, axis=0) * temperature"]
    # only the uses after the definition: the load that makes `raw` is never rewritten
    assert not any("wide = wide" in new_line(parsed, e) for e in found)


def test_an_unused_batch_index_goes_back_into_the_addresses_with_a_stride() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            b = tl.program_id(0)
            j = tl.arange(0, BLK)
            v = tl.load(x_ptr + j, mask=j < L, other=0.0)
            tl.store(o_ptr + j, v * temperature, mask=j < L)
    """)
    (dead,) = dead_names(parsed, parsed.kernels[0])
    assert (dead.name, dead.kind) == ("b", "position")
    lines = [new_line(parsed, e) for e in of(parsed, "dead-position")]
    assert "v = tl.load(x_ptr + j + b * sx, mask=j < L, other=0.0)" in lines
    assert "tl.store(o_ptr + j + b * so, v * temperature, mask=j < L)" in lines
    assert not any("j < L + b" in line for line in lines)
    # and once on every strided access at once: the load's and the store's offsets were both left out
    (both,) = [e for e in of(parsed, "dead-position") if "every" in e.description and "b * sx" in e.source]
    assert "tl.load(x_ptr + j + b * sx," in both.source and "tl.store(o_ptr + j + b * sx," in both.source


def test_a_program_id_left_unused_replaces_the_one_used_twice() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            r = tl.program_id(0)
            c = tl.program_id(1)
            rows = r * BLK + tl.arange(0, BLK)
            cols = r * BLK + tl.arange(0, BLK)
            v = tl.load(x_ptr + rows[:, None] * sx + cols[None, :])
            tl.store(o_ptr + rows[:, None] * so + cols[None, :], v * temperature)
    """)
    lines = [new_line(parsed, e) for e in of(parsed, "dead-position")]
    assert "cols = c * BLK + tl.arange(0, BLK)" in lines
    assert "rows = c * BLK + tl.arange(0, BLK)" in lines


def test_a_program_id_left_unused_starts_a_block_of_indices_made_without_one() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BR: tl.constexpr, BC: tl.constexpr):
            r = tl.program_id(0)
            c = tl.program_id(1)
            rows = r * BR + tl.arange(0, BR)
            cols = tl.arange(0, BC)
            v = tl.load(x_ptr + rows[:, None] * sx + cols[None, :])
            tl.store(o_ptr + rows[:, None] * so + cols[None, :], v * temperature)
    """)
    found = of(parsed, "dead-position")
    starts = [new_line(parsed, e) for e in found if "a block's start" in e.description]
    assert starts == ["cols = c * BC + tl.arange(0, BC)"]  # not the rows, which have their program id
    assert all(e.cue.startswith("`c` is computed at line") for e in found if "a block's start" in e.description)


def test_a_stride_passed_and_never_read_is_added_where_an_index_steps_by_its_tensor_s_other_stride() -> None:
    source = "import torch\nimport triton\nimport triton.language as tl\n\n" + textwrap.dedent("""
        @triton.jit
        def _diag(m_ptr, o_ptr, n, s_b, s_r, s_c, so, BLOCK: tl.constexpr):
            b = tl.program_id(0)
            i = tl.arange(0, BLOCK)
            d = tl.load(m_ptr + b * s_b + i * s_r, mask=i < n, other=0.0)
            tl.store(o_ptr + b * so, tl.sum(d, axis=0))

        class ModelNew(torch.nn.Module):
            def forward(self, m):
                out = torch.empty(m.shape[0], device=m.device)
                _diag[(m.shape[0],)](m, out, m.shape[1], m.stride(0), m.stride(1), m.stride(2), out.stride(0), BLOCK=32)
                return out
        """)
    parsed = Program.parse(source)
    assert parsed is not None
    found = of(parsed, "dead-stride")
    lines = [new_line(parsed, e) for e in found]
    # both of m's strided terms get the unused column stride; `b * so` (the output's own stride) does not
    assert "d = tl.load(m_ptr + b * s_b + i * s_r + i * s_c, mask=i < n, other=0.0)" in lines
    # in its place first: a stride used where the unused one belongs is the commoner bug
    assert lines.index("d = tl.load(m_ptr + b * s_b + i * s_c, mask=i < n, other=0.0)") < lines.index(
        "d = tl.load(m_ptr + b * s_b + i * s_r + i * s_c, mask=i < n, other=0.0)"
    )
    assert not any("so + b * s_c" in line for line in lines)
    assert {e.cue for e in found} == {"`s_c` is passed but never used"}
    # stride-name makes the same replacement, uncued and earlier in the registry: the cued one takes its place
    both = [e for e in edits(parsed, ["stride-name", "dead-stride"]) if new_line(parsed, e).startswith("d = ")]
    same = [e for e in both if new_line(parsed, e) == "d = tl.load(m_ptr + b * s_b + i * s_c, mask=i < n, other=0.0)"]
    assert [(e.operator, bool(e.cue)) for e in same] == [("dead-stride", True)]


def test_an_accumulator_only_its_own_updates_read_is_dead_and_sizes_pointers_constexprs_are_not() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            b = tl.program_id(0)
            total = 0.0
            last = 0.0
            for start in range(0, L, BLK):
                j = start + tl.arange(0, BLK)
                v = tl.load(x_ptr + b * sx + j, mask=j < L, other=0.0)
                total += tl.sum(v, axis=0)
                last = tl.sum(v, axis=0)
            tl.store(o_ptr + b * so, last * temperature)
    """)
    names = {d.name for d in dead_names(parsed, parsed.kernels[0])}
    assert names == {"total"}  # not w_ptr (a pointer), L (a size), BLK (constexpr), temperature (read)
    lines = [new_line(parsed, e) for e in of(parsed, "dead-value")]
    assert "tl.store(o_ptr + b * so, last * temperature * total)" in lines or any(
        "total" in line and line.startswith("tl.store") for line in lines
    )


def test_a_kernel_without_dead_names_gets_no_edit() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            b = tl.program_id(0)
            j = tl.arange(0, BLK)
            v = tl.load(x_ptr + b * sx + j, mask=j < L, other=0.0)
            tl.store(o_ptr + b * so + j, v * temperature, mask=j < L)
    """)
    assert dead_names(parsed, parsed.kernels[0]) == []
    assert of(parsed, "dead-value") == [] and of(parsed, "dead-position") == []


def test_a_mask_computed_and_never_used_is_joined_to_the_masks_after_it() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            rows = tl.program_id(0) * BLK + tl.arange(0, BLK)
            cols = tl.arange(0, BLK)
            row_ok = rows < L
            col_ok = cols < L
            v = tl.load(x_ptr + rows[:, None] * sx + cols[None, :], mask=row_ok[:, None], other=0.0)
            tl.store(o_ptr + rows * so, tl.sum(v, axis=1) * temperature)
    """)
    (dead,) = dead_names(parsed, parsed.kernels[0])
    assert (dead.name, dead.kind) == ("col_ok", "mask")
    assert of(parsed, "dead-value") == []  # a mask is no factor
    lines = [new_line(parsed, e) for e in of(parsed, "dead-mask")]
    assert (
        "v = tl.load(x_ptr + rows[:, None] * sx + cols[None, :], mask=row_ok[:, None] & col_ok[None, :], other=0.0)"
        in lines
    )
    # the store indexes `rows` only: a mask over `cols` is not put on it, and `col_ok` goes on the load along `cols`
    assert not any("mask=col_ok" in line for line in lines)
    assert not any("col_ok[:, None]" in line or "& col_ok," in line for line in lines if line.startswith("v ="))


def test_a_dead_mask_goes_on_every_access_along_its_lanes_at_once_and_around_a_sum() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            rows = tl.program_id(0) * BLK + tl.arange(0, BLK)
            pairs = tl.arange(0, BLK)
            keep = pairs < L // 2
            left = pairs * 2
            v = tl.load(x_ptr + rows[:, None] * sx + left[None, :], mask=left[None, :] < L, other=0.0)
            g = tl.load(w_ptr + left)
            both = tl.maximum(v, g[None, :])
            tl.store(o_ptr + rows * so, tl.sum(both, axis=1) * temperature, mask=rows < L)
    """)
    found = [e for e in of(parsed, "dead-mask") if e.cue == "`keep` is computed at line 10 but never used"]
    (together,) = [e for e in found if "every access" in e.description]
    assert "mask=(left[None, :] < L) & keep[None, :], other=0.0)" in together.source
    assert "g = tl.load(w_ptr + left, mask=keep, other=0.0)" in together.source
    assert "tl.store(o_ptr + rows * so, tl.sum(both, axis=1) * temperature, mask=rows < L)" in together.source
    lines = [new_line(parsed, e) for e in found]
    assert (
        "tl.store(o_ptr + rows * so, tl.sum(tl.where(keep[None, :], both, 0.0), axis=1) * temperature, "
        "mask=rows < L)" in lines
    )


def test_a_dead_mask_that_is_a_2d_block_already_goes_bare_on_the_2d_accesses_only() -> None:
    parsed = program("""
        @triton.jit
        def _k(x_ptr, w_ptr, o_ptr, L, sx, so, temperature, BLK: tl.constexpr):
            rows = tl.program_id(0) * BLK + tl.arange(0, BLK)
            row_ok = rows < L
            cols = tl.arange(0, BLK)
            both = row_ok[:, None] & (cols[None, :] < L)
            v = tl.load(x_ptr + rows[:, None] * sx + cols[None, :])
            tl.store(o_ptr + rows * so, tl.sum(v, axis=1) * temperature, mask=row_ok)
    """)
    lines = [new_line(parsed, e) for e in of(parsed, "dead-mask")]
    assert lines == [
        "v = tl.load(x_ptr + rows[:, None] * sx + cols[None, :], mask=both, other=0.0)",
        "tl.store(o_ptr + rows * so, tl.sum(tl.where(both, v, 0.0), axis=1) * temperature, mask=row_ok)",
    ]


STORED_OVER_INPUT = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _swish(in_ptr, out_ptr, rows, cols, s_r, s_c, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        base = in_ptr + row * s_r
        cs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        ptrs = base + cs * s_c
        x = tl.load(ptrs, mask=cs < cols, other=0.0)
        tl.store(ptrs, x * tl.sigmoid(x), mask=cs < cols)


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            rows, cols = x.shape
            _swish[(rows, triton.cdiv(cols, 64))](x, out, rows, cols, x.stride(0), x.stride(1), BLOCK=64)
            return out
    """
)

SWISH_TASK = textwrap.dedent(
    '''
    """Swish of rows."""
    import torch
    import torch.nn as nn

    rows = 5
    cols = 200


    class Model(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(x)


    def get_inputs():
        return [torch.randn(rows, cols)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"rows": 5, "cols": 200}, {"rows": 2, "cols": 77}]
    '''
)


def test_an_unused_output_pointer_gets_the_stores_made_over_the_input(evaluator: Evaluator, tmp_path: Path) -> None:
    """The kernel stores to the address it loaded (`ptrs`, from `in_ptr` through `base`) and never touches `out_ptr`,
    which the host returns: the store goes to `out_ptr`, its address written out."""
    program = Program.parse(STORED_OVER_INPUT, SWISH_TASK)
    assert program is not None
    made = edits(program, ["dead-pointer"])
    assert len(made) == 1 and made[0].grounded and "`out_ptr`" in made[0].cue
    assert "tl.store(out_ptr + row * s_r + cs * s_c, x * tl.sigmoid(x), mask=cs < cols)" in made[0].source
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(SWISH_TASK)
    candidate.write_text(STORED_OVER_INPUT)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    written = program.text.replace("ptrs = base + cs * s_c\n", "ptrs = base + cs * s_c\n    y_ptrs = out_ptr + cs\n")
    used = Program.parse(written, SWISH_TASK)
    assert used is not None and edits(used, ["dead-pointer"]) == []
