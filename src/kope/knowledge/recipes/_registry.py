"""The recipe registry: the `recipe` decorator and `apply`."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

Recipe = Callable[[str], Iterator[str]]


RECIPES: dict[str, Recipe] = {}


RECIPE_DESCRIPTIONS: dict[str, str] = {}


def recipe(name: str, description: str) -> Callable[[Recipe], Recipe]:
    def register(fn: Recipe) -> Recipe:
        RECIPES[name] = fn
        RECIPE_DESCRIPTIONS[name] = description
        return fn

    return register


def apply(name: str, source: str) -> list[str]:
    """The distinct edits a recipe proposes (none if it does not apply or the source does not parse)."""
    fn = RECIPES.get(name)
    if fn is None:
        return []
    try:
        edits = list(fn(source))
    except (cst.ParserSyntaxError, RecursionError):
        return []
    unique: list[str] = []
    for edit in edits:
        if edit != source and edit not in unique:
            unique.append(edit)
    return unique
