"""Reductions and accumulators (kope.bugs.reductions): the edits that real kernels' accumulation bugs need."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, SCALE_TASK

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
