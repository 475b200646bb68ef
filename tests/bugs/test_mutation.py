"""Mutation operators: each makes its intended change on a small kernel; real mutants are near misses."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TAXONOMY

from kope.bench.corpus import validation_options, verdict
from kope.bugs.mutation import OPERATORS, MutationError, count_sites, mutants, mutate, normalise
from kope.evaluate import Evaluator
from kope.ops import get_op

TOY = (Path(__file__).parents[1] / "fixtures" / "mutation_toy.py").read_text()
"""A kernel that holds one site of every mutation operator."""

# operator -> (a line of the first mutant, that is not in the toy kernel)
EXPECTED = {
    "drop-mask": "x = tl.load(x_row + offs)",
    "mask-inclusive": "x = tl.load(x_row + offs, mask=offs <= n_cols, other=0.0)",
    "loop-stops-early": "for start in range(0, n_cols - BLOCK, BLOCK):",
    "loop-floor-division": "for start in range(0, n_cols // BLOCK * BLOCK, BLOCK):",
    "grid-floor-division": "grid = (x.shape[0] // 1, triton.cdiv(x.shape[1], 64))",
    "grid-axis-one": "grid = (1, triton.cdiv(x.shape[1], 64))",
    "stride-other-dim": "x.stride(1), 1e-5",
    "swap-strides": None,
    "shift-index": "x = tl.load(x_row + offs + 1, mask=offs < n_cols, other=0.0)",
    "wrong-divisor": "mean = tl.sum(acc, axis=0) / (n_cols - 1)",
    "change-constant": "e = tl.exp(mean - safe) * 0.44715",
    "store-not-atomic": "tl.store(sum_ptr, tl.sum(tl.sum(tile, axis=1), axis=0) * rstd + e)",
    "half-precision": "acc = tl.zeros([BLOCK], dtype=tl.float16)",
    "drop-max-subtraction": "e = tl.exp(mean) * 0.044715",
    "drop-inf-guard": "safe = row_max",
    "misplaced-epsilon": "rstd = 1.0 / tl.sqrt(mean * mean) + eps",
    "accumulator-reset": "acc = x",
    "swap-broadcast": "tile = w[None, :] + w[None, :]",
    "wrong-reduction-init": "m = tl.full([BLOCK], 0.0, dtype=tl.float32)",
    "wrong-padding": "x = tl.load(x_row + offs, mask=offs < n_cols, other=1.0)",
    "drop-row-offset": "x_row = x_ptr\n",
    "skip-first-block": None,
    "group-uncapped": None,  # tests/bugs/test_grid.py: the toy has no grouped launch order
    "integer-buffer": "total = torch.zeros((), device=x.device, dtype=torch.int32)",
    "operands-untransposed": None,  # tests/bugs/test_dims.py: the toy launches no transposed operand
    "constexpr-dropped": None,  # tests/bugs/test_api.py: on the row-norm kernel, whose block a tl.arange ranges over
}
SWAPPABLE = "    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak\n"


def test_every_operator_is_covered_and_labelled() -> None:
    assert set(EXPECTED) == set(OPERATORS) and len(OPERATORS) >= 12
    assert {op.label for op in OPERATORS.values()} == set(TAXONOMY)


@pytest.mark.parametrize("name", sorted(n for n, line in EXPECTED.items() if line))
def test_operator_makes_its_change(name: str) -> None:
    found = mutants(TOY, name)
    assert found, f"{name} found no site"
    first = found[0]
    expected = EXPECTED[name]
    assert expected is not None and expected not in TOY
    assert expected in first.source, first.source
    assert first.label == OPERATORS[name].label and first.operator == name
    assert expected in "\n".join(first.source.splitlines()[first.line - 1 :])
    compile(first.source, "mutant.py", "exec")
    assert len(first.source.splitlines()) >= len(TOY.splitlines()) - 1


def test_swap_strides_and_skip_first_block() -> None:
    source = f"import triton\n\n@triton.jit\ndef k(a_ptr, stride_am, stride_ak, M, BLOCK_M: tl.constexpr):\n{SWAPPABLE}"
    swapped = mutate(source, "swap-strides", 0)
    assert "offs_m[:, None] * stride_ak + offs_k[None, :] * stride_am" in swapped
    skipped = mutants(TOY, "skip-first-block")
    assert len(skipped) == 1 and "range(BLOCK, n_cols, BLOCK)" in skipped[0].source
    assert skipped[0].source.count("range(0, n_cols, BLOCK)") == 1, "only the write loop moves"


def test_accumulator_reset_inside_the_loop_and_sites_are_deterministic() -> None:
    found = [m.source for m in mutants(TOY, "accumulator-reset")]
    assert any("        acc = tl.zeros([BLOCK], dtype=tl.float32)\n        offs = start + cols" in s for s in found)
    assert any("        m = x\n" in s for s in found)
    assert [m.source for m in mutants(TOY, "accumulator-reset")] == found
    assert count_sites(TOY, "accumulator-reset") == len(found)
    with pytest.raises(MutationError):
        mutate(TOY, "accumulator-reset", len(found))
    with pytest.raises(MutationError):
        mutate("def broken(:\n", "drop-mask", 0)


def test_host_operators_leave_the_kernel_alone_and_kernel_operators_the_host() -> None:
    for mutant in mutants(TOY, "grid-floor-division"):
        kernel_part = mutant.source.split("class ModelNew")[0]
        assert kernel_part == TOY.split("class ModelNew")[0]
    for mutant in mutants(TOY, "half-precision"):
        assert mutant.source.split("class ModelNew")[1] == TOY.split("class ModelNew")[1]


def test_normalise_ignores_comments_and_formatting() -> None:
    assert normalise("x = (1 +  2)  # two\n") == normalise("x = 1 + 2\n")
    assert normalise("x = 1 + 2\n") != normalise("x = 1 - 2\n")


NEAR_MISSES = [
    ("row_sum", "mask-inclusive"),
    ("row_sum", "accumulator-reset"),
    ("relu", "grid-floor-division"),
    ("layernorm", "misplaced-epsilon"),
]


@pytest.mark.parametrize(("op", "name"), NEAR_MISSES)
def test_real_mutants_are_near_misses(evaluator: Evaluator, tmp_path: Path, op: str, name: str) -> None:
    info = get_op(op)
    found = mutants(info.kernel_path.read_text(), name)
    path = tmp_path / "mutant.py"
    path.write_text(found[0].source)
    result = evaluator.evaluate(info.task_path, path, options=validation_options())
    assert verdict(result) == "near-miss", [(c.name, c.passed, c.error) for c in result.cases]
