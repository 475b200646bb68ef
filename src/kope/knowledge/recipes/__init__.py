"""Recipes: mechanical fixes for known bug patterns, as concrete-syntax-tree edits (libcst).

A recipe takes a candidate's source and returns zero or more edited sources, each a plausible fix
(formatting and comments outside the edit are kept). The offline repair model tries the recipes of
the top hypotheses in order and keeps the first edit that passes evaluation. A recipe never
evaluates anything itself.

The recipes live in one module per bug family (masks, grid, indexing, reductions, constants, writes,
numerics, precision); this package holds the registry, in one fixed order.
"""

from __future__ import annotations

from kope.knowledge.recipes import constants, grid, indexing, masks, numerics, precision, reductions, writes
from kope.knowledge.recipes._registry import RECIPE_DESCRIPTIONS, RECIPES, Recipe, apply, recipe

__all__ = ["ORDER", "RECIPES", "RECIPE_DESCRIPTIONS", "Recipe", "apply", "recipe"]

_FAMILIES = (masks, grid, indexing, reductions, constants, writes, numerics, precision)

ORDER = (
    "grid-ceil-div",
    "add-mask",
    "strict-mask",
    "neutral-padding",
    "full-loop-range",
    "outer-stride",
    "remove-index-shift",
    "count-normalizer",
    "known-constant",
    "atomic-accumulate",
    "upcast-fp32",
    "guard-exp",
    "eps-inside-sqrt",
    "hoist-accumulator",
    "swap-broadcast",
    "reduction-identity",
    "float-buffer",
    "add-batch-offset",
    "cover-output",
)
"""The order of the registry (listings, `kope kb validate`): that of the single module the recipes came from.
A recipe missing here comes after these."""


def _in_order(registry: dict[str, object], order: tuple[str, ...]) -> None:
    ordered = {**{name: registry[name] for name in order if name in registry}, **registry}
    registry.clear()
    registry.update(ordered)


_in_order(RECIPES, ORDER)  # type: ignore[arg-type]
_in_order(RECIPE_DESCRIPTIONS, ORDER)  # type: ignore[arg-type]
