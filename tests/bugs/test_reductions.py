"""Reductions and accumulators (kope.bugs.reductions): the edits that real kernels' accumulation bugs need."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, SCALE_TASK, verdicts

from kope.bugs.edit import Program, edits
from kope.evaluate import EvalOptions, Evaluator

ATOMIC = FIXTURES / "interpreter" / "autotune_atomic.py"


def test_an_autotuned_atomic_accumulation_gets_its_buffer_restored_around_the_benchmark(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """The kernel adds into its zeroed output atomically under an autotune of two configs that neither resets nor
    restores it: the benchmark's run adds too (kope's interpreter runs it as a GPU does). `restore_value` is
    grounded (right whatever the host put in the buffer), `reset_to_zero` offered; the restored version passes."""
    source = ATOMIC.read_text()
    program = Program.parse(source, SCALE_TASK.read_text())
    assert program is not None
    made = edits(program, ["autotune-restore"])
    assert made[0].grounded and "restore_value=['out_ptr']" in made[0].source
    assert any(not e.grounded and "reset_to_zero=['out_ptr']" in e.source for e in made)
    restored = tmp_path / "restored.py"
    restored.write_text(made[0].source)
    options = EvalOptions(trials=2, timeout_s=60)
    assert evaluator.evaluate(SCALE_TASK, ATOMIC, options=options, which=["N=1000"]).status == "fail"
    assert evaluator.evaluate(SCALE_TASK, restored, options=options, which=["N=1000"]).status == "pass"
    covered = Program.parse(made[0].source, SCALE_TASK.read_text())
    assert covered is not None and edits(covered, ["autotune-restore"]) == []  # named already: nothing more


NESTED_ATOMIC = """import torch
import torch.nn as nn
import triton
import triton.language as tl


def scale_add(x):
    tunings = [
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=8),
    ]

    @triton.autotune(configs=tunings, key=["n_elements"])
    @triton.jit
    def scale_add_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        tl.atomic_add(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)

    out = torch.zeros_like(x)
    n = x.numel()
    scale_add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, out, n)
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        return scale_add(x)
"""


def test_autotune_restore_reads_configs_bound_to_a_name_in_the_host_function(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Real models often define the kernel inside its host function, its configs bound to a local name first
    (`tunings = [...]`, then `configs=tunings`): that name is read through to its two configs, so the same bug gets
    the same edit, and the restored version passes where the start fails."""
    program = Program.parse(NESTED_ATOMIC, SCALE_TASK.read_text())
    assert program is not None
    made = edits(program, ["autotune-restore"])
    assert made and made[0].grounded and "restore_value=['out_ptr']" in made[0].source
    before, after = tmp_path / "nested.py", tmp_path / "restored.py"
    before.write_text(NESTED_ATOMIC)
    after.write_text(made[0].source)
    options = EvalOptions(trials=2, timeout_s=60)
    assert evaluator.evaluate(SCALE_TASK, before, options=options, which=["N=1000"]).status == "fail"
    assert evaluator.evaluate(SCALE_TASK, after, options=options, which=["N=1000"]).status == "pass"


def test_autotune_restore_names_the_buffer_not_the_scalars_its_address_adds() -> None:
    """A scalar the address subtracts (`- pad`) is an offset, not a buffer; one it adds (`+ base`) cannot be told
    from a pointer by the text, so each name is also offered alone (the autotuner refuses to restore a scalar)."""
    source = ATOMIC.read_text().replace("n_elements, BLOCK_SIZE", "n_elements, pad, base, BLOCK_SIZE")
    subtracted = Program.parse(source.replace("out_ptr + offsets,", "out_ptr + offsets - pad,"), SCALE_TASK.read_text())
    assert subtracted is not None
    assert {e.description.split("`")[1] for e in edits(subtracted, ["autotune-restore"])} == {
        "restore_value=['out_ptr']",
        "reset_to_zero=['out_ptr']",
    }
    added = Program.parse(source.replace("out_ptr + offsets,", "out_ptr + offsets + base,"), SCALE_TASK.read_text())
    assert added is not None
    restores = [e.description.split("`")[1] for e in edits(added, ["autotune-restore"]) if e.grounded]
    assert restores == ["restore_value=['base', 'out_ptr']", "restore_value=['base']", "restore_value=['out_ptr']"]


def test_a_configs_name_is_read_in_the_kernels_own_scope() -> None:
    """A module-level kernel's `configs=tunings` reads the module's `tunings` (one config: no benchmark, no edit),
    not the two-config list a host function above binds to the same name for its own kernel (edited)."""
    module_level = (
        'tunings = [triton.Config({"BLOCK_SIZE": 128})]\n\n\n'
        + NESTED_ATOMIC.split("\n\n\nclass ModelNew")[0].split("import triton.language as tl\n", 1)[1]
        + '\n\n\n@triton.autotune(configs=tunings, key=["n_elements"])\n@triton.jit\n'
        "def single_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
        "    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    tl.atomic_add(out_ptr + offsets, tl.load(x_ptr + offsets), mask=offsets < n_elements)\n"
    )
    source = NESTED_ATOMIC.split("def scale_add", 1)[0] + module_level
    program = Program.parse(source, SCALE_TASK.read_text())
    assert program is not None and "def scale_add(x):" in source and "def single_kernel" in source
    made = edits(program, ["autotune-restore"])
    assert made and all("scale_add_kernel" in e.description for e in made), [e.description for e in made]


SOFTMAX_TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(6, 300)]


def get_init_inputs():
    return []
"""

ONE_PASS_SOFTMAX = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    top = tl.full((BLOCK,), -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * stride + start + offs, mask=start + offs < n_cols, other=-float("inf"))
        top = tl.maximum(top, x)
    peak = tl.max(top, axis=0)
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + offs < n_cols
        e = tl.exp(tl.load(x_ptr + row * stride + start + offs, mask=mask, other=-float("inf")) - peak)
        total += tl.sum(e, axis=0)
        # normalise in the same pass
        tl.store(out_ptr + row * stride + start + offs, e / total, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        softmax_rows[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=128)
        return out
"""


def test_a_store_scaled_by_a_sum_its_loop_is_still_accumulating_is_split_into_two_passes(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Each tile but the last is divided by a partial sum: the loop is split (the sum over every tile first, then
    a pass that stores), grounded because the stored value divides by the running value. Wrong before, right after,
    through the real evaluator."""
    program = Program.parse(ONE_PASS_SOFTMAX, SOFTMAX_TASK)
    assert program is not None
    (edit,) = edits(program, ["normalize-after"])
    assert edit.grounded and "`total`" in edit.description
    _, second = edit.source.split("total += tl.sum(e, axis=0)")
    assert "tl.store" not in second.split("for start")[0] and second.count("for start") == 1
    assert "total +=" not in second and "e / total" in second
    task = tmp_path / "softmax.py"
    task.write_text(SOFTMAX_TASK)
    assert verdicts(evaluator, task, [ONE_PASS_SOFTMAX, edit.source], tmp_path) == ["fail", "pass"]


def test_a_scan_that_stores_its_running_value_is_offered_the_split_but_not_grounded() -> None:
    """A cumulative sum stores the running value itself, which is right: the split stays a hypothesis."""
    scan = ONE_PASS_SOFTMAX.replace("e / total", "total + e")
    program = Program.parse(scan, SOFTMAX_TASK)
    assert program is not None
    assert [e.grounded for e in edits(program, ["normalize-after"])] == [False]
    honest = ONE_PASS_SOFTMAX.replace("tl.store(out_ptr + row * stride + start + offs, e / total, mask=mask)", "pass")
    program = Program.parse(honest, SOFTMAX_TASK)
    assert program is not None and edits(program, ["normalize-after"]) == []


TILE_SOFTMAX = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_tile(x_ptr, out_ptr, n_rows, n_cols, stride, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    x = tl.load(
        x_ptr + rows[:, None] * stride + cols[None, :],
        mask=(rows[:, None] < n_rows) & (cols[None, :] < n_cols),
        other=0.0,
    )
    top = tl.max(x, axis=1)
    e = tl.exp(x - top[:, None])
    total = tl.sum(e, axis=1)
    row_ok = rows[:, None] < n_rows
    keep = row_ok & (cols[None, :] < n_cols)
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], e / total[:, None], mask=keep)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        rows, cols = x.shape
        softmax_tile[(triton.cdiv(rows, 2),)](
            x, out, rows, cols, x.stride(0), BR=2, BC=triton.next_power_of_2(cols)
        )
        return out
"""


def test_padding_where_writes_out_a_store_mask_built_after_the_value_it_zeroes(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Padded columns loaded as 0 give `exp(0 - top)` to the row's sum; the store's mask that would zero them is
    built only after the sum, so its name cannot be read there: the edit writes the comparison out. Wrong before,
    right after, through the real evaluator."""
    program = Program.parse(TILE_SOFTMAX, SOFTMAX_TASK)
    assert program is not None
    written = "e = tl.where((rows[:, None] < n_rows) & (cols[None, :] < n_cols), tl.exp(x - top[:, None]), 0.0)"
    made = [e for e in edits(program, ["padding-where"]) if written in e.source]
    assert made, [e.description for e in edits(program, ["padding-where"])]
    assert [e.grounded for e in edits(program, ["padding-where"])].count(True) == 1 and made[0].grounded
    assert not any("tl.where(keep," in e.source or "tl.where(row_ok," in e.source for e in edits(program))
    task = tmp_path / "softmax.py"
    task.write_text(SOFTMAX_TASK)
    assert verdicts(evaluator, task, [TILE_SOFTMAX, made[0].source], tmp_path) == ["fail", "pass"]


def test_padding_where_is_not_grounded_where_the_padding_is_neutral_already() -> None:
    """Loaded with `other=-inf` (or a huge negative number, or a name whose value the source does not state), the
    padded lanes' exponentials are 0: the edit stays a hypothesis."""
    for neutral in (
        TILE_SOFTMAX.replace("other=0.0", "other=-float('inf')"),
        TILE_SOFTMAX.replace("other=0.0", "other=-1e30"),
        TILE_SOFTMAX.replace("other=0.0", "other=NEG"),
        TILE_SOFTMAX.replace(
            "top = tl.max(x, axis=1)", "x = tl.where(cols[None, :] < n_cols, x, -1e30)\n    top = tl.max(x, axis=1)"
        ),
    ):
        program = Program.parse(neutral, SOFTMAX_TASK)
        assert program is not None
        made = edits(program, ["padding-where"])
        assert made and not any(e.grounded for e in made)
