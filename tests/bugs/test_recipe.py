"""Each recipe repairs a kernel of its pattern (a near-miss fixture or the pattern's example)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from kope.bugs.recipe import ORDER, RECIPE_DESCRIPTIONS, RECIPES, apply
from kope.evaluate import EvalOptions, Evaluator
from kope.knowledge.base import KnowledgeBase, example_path
from kope.ops import get_op

NEAR_MISS = Path(__file__).parents[2] / "src" / "kope" / "corpora" / "fixtures"
BASE = KnowledgeBase.load(include_user=False)
OPTIONS = EvalOptions(trials=1, timeout_s=60)

# recipe -> the kernel it is checked on: a near-miss fixture (file name) or a pattern's example ("example")
TARGETS = {
    "grid-ceil-div": "bias_add_grid_rows_floor_div.py",
    "add-mask": "rmsnorm_missing_load_mask.py",
    "strict-mask": "row_sum_mask_le.py",
    "neutral-padding": "layernorm_var_includes_padding.py",
    "full-loop-range": "layernorm_mean_loop_floor_div.py",
    "outer-stride": "cumsum_row_stride_wrong_dim.py",
    "remove-index-shift": "argmax_block_relative_index.py",
    "count-normalizer": "row_mean_divide_by_block.py",
    "known-constant": "attention_exp2_without_log2e.py",
    "atomic-accumulate": "example",
    "upcast-fp32": "matmul_transposed_fp16_dot.py",
    "guard-exp": "cross_entropy_online_lse_nan.py",
    "eps-inside-sqrt": "layernorm_eps_outside_sqrt.py",
    "hoist-accumulator": "matmul_acc_reset_in_k_loop.py",
    "swap-broadcast": "example",
    "reduction-identity": "row_max_zero_init.py",
    "float-buffer": "cross_entropy_loss_buffer_int64.py",
    "add-batch-offset": "bmm_missing_batch_offset_a.py",
    "cover-output": "embedding_grid_missing_dim_axis.py",
    "mend-api": "example",
}


def _target(recipe: str) -> tuple[str, Path]:
    """(operator, kernel path) for a recipe's check."""
    pattern = next(p for p in BASE.patterns.values() if p.recipe is not None and p.recipe.name == recipe)
    if TARGETS[recipe] == "example":
        assert pattern.example is not None
        path = example_path(pattern)
        assert path is not None
        return pattern.example.op, path
    item = next(i for i in json.loads((NEAR_MISS / "manifest.json").read_text()) if i["file"] == TARGETS[recipe])
    assert item["label"] == pattern.id
    return item["op"], NEAR_MISS / item["file"]


def test_every_recipe_is_checked() -> None:
    assert set(TARGETS) == set(RECIPES)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(TARGETS))
def test_recipe_repairs_a_kernel_of_its_pattern(recipe: str, evaluator: Evaluator, tmp_path: Path) -> None:
    op, kernel = _target(recipe)
    source = kernel.read_text()
    edits = apply(recipe, source)
    assert edits, f"{recipe} proposes nothing for {kernel.name}"
    statuses = []
    for i, edit in enumerate(edits):
        ast.parse(edit)
        candidate = tmp_path / f"{i}_{kernel.name}"
        candidate.write_text(edit)
        statuses.append(evaluator.evaluate(get_op(op).task_path, candidate, options=OPTIONS).status)
        if statuses[-1] == "pass":
            break
    assert "pass" in statuses, statuses


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_recipes_leave_a_correct_kernel_alone(recipe: str) -> None:
    source = get_op("softmax").kernel_path.read_text()
    assert apply(recipe, source) == []


def test_recipes_keep_formatting_and_comments_outside_the_edit() -> None:
    source = (NEAR_MISS / "relu_grid_floor_div.py").read_text()
    (edit,) = apply("grid-ceil-div", source)
    changed = [(a, b) for a, b in zip(source.splitlines(), edit.splitlines(), strict=True) if a != b]
    assert changed == [("        grid = (n_elements // BLOCK,)", "        grid = (triton.cdiv(n_elements, BLOCK),)")]


def test_a_recipe_on_unparsable_source_proposes_nothing() -> None:
    assert apply("add-mask", "def broken(:\n") == []


def test_every_recipe_of_every_family_is_listed_in_order() -> None:
    assert list(RECIPES) == list(RECIPE_DESCRIPTIONS) == list(ORDER), "a new recipe goes into ORDER"
