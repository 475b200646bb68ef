"""Recipes: mechanical fixes for known bug patterns, as concrete-syntax-tree edits (libcst).

A recipe takes a candidate's source and returns zero or more edited sources, each a plausible fix
(formatting and comments outside the edit are kept). The offline repair model tries the recipes of
the top hypotheses in order and keeps the first edit that passes evaluation. A recipe never
evaluates anything itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import libcst as cst
import libcst.matchers as m


@dataclass(frozen=True)
class RecipeContext:
    """What a recipe may use beyond the source: the diagnosis features and the pattern's params."""

    features: dict[str, Any]
    params: dict[str, Any]


Recipe = Callable[[str, RecipeContext], Iterator[str]]
RECIPES: dict[str, Recipe] = {}
RECIPE_DESCRIPTIONS: dict[str, str] = {}


def recipe(name: str, description: str) -> Callable[[Recipe], Recipe]:
    def register(fn: Recipe) -> Recipe:
        RECIPES[name] = fn
        RECIPE_DESCRIPTIONS[name] = description
        return fn

    return register


def apply(name: str, source: str, context: RecipeContext) -> list[str]:
    """The distinct edits a recipe proposes (none if it does not apply or the source does not parse)."""
    fn = RECIPES.get(name)
    if fn is None:
        return []
    try:
        edits = list(fn(source, context))
    except (cst.ParserSyntaxError, RecursionError):
        return []
    unique: list[str] = []
    for edit in edits:
        if edit != source and edit not in unique:
            unique.append(edit)
    return unique


def parse(source: str) -> cst.Module:
    return cst.parse_module(source)


def is_launch(node: cst.Call) -> bool:
    """`kernel[grid](...)`."""
    return isinstance(node.func, cst.Subscript)


class _FloorToCdiv(cst.CSTTransformer):
    """Every `a // b` becomes `triton.cdiv(a, b)`."""

    def __init__(self) -> None:
        self.changed = False

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if m.matches(updated_node.operator, m.FloorDivide()):
            self.changed = True
            return cst.Call(
                func=cst.Attribute(value=cst.Name("triton"), attr=cst.Name("cdiv")),
                args=[cst.Arg(updated_node.left), cst.Arg(updated_node.right)],
            )
        return updated_node


def launch_grid_names(module: cst.Module) -> set[str]:
    """Names used as grids in `kernel[grid](...)`."""
    names: set[str] = set()
    for call in m.findall(module, m.Call(func=m.Subscript())):
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Subscript)
        for element in call.func.slice:
            if isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name):
                names.add(element.slice.value.value)
    return names


class _GridFloorToCeil(cst.CSTTransformer):
    """In launch grids, and in values assigned to names used as grids, `a // b` -> `triton.cdiv(a, b)`."""

    def __init__(self, grid_names: set[str]) -> None:
        self.grid_names = grid_names
        self.changed = False

    def _rewrite(self, node: cst.CSTNodeT) -> cst.CSTNodeT:
        inner = _FloorToCdiv()
        rewritten = node.visit(inner)
        self.changed |= inner.changed
        return rewritten  # type: ignore[return-value]

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if isinstance(updated_node.func, cst.Subscript):
            return updated_node.with_changes(func=self._rewrite(updated_node.func))
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        targets = {t.target.value for t in updated_node.targets if isinstance(t.target, cst.Name)}
        if targets & self.grid_names:
            return updated_node.with_changes(value=self._rewrite(updated_node.value))
        return updated_node


@recipe("grid-ceil-div", "use triton.cdiv instead of floor division in launch grids")
def grid_ceil_div(source: str, context: RecipeContext) -> Iterator[str]:
    module = parse(source)
    transformer = _GridFloorToCeil(launch_grid_names(module))
    edited = module.visit(transformer)
    if transformer.changed:
        yield edited.code
