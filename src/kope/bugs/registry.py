"""The bug kinds: one module each, one line each in `KINDS`.

A kind's module holds, side by side, the four roles of one family of bugs:

- its cues (`@cue`, kope.bugs.cue): how diagnosis sees the bug in a kernel's source;
- its recipes (`@recipe`, kope.bugs.recipe): the knowledge base's mechanical fixes;
- its edits (`@operator`, kope.bugs.edit): the repair search's operators;
- its mutations (`@mutation`, kope.bugs.mutation): how the bench injects the bug into a correct kernel.

Importing this module imports every kind's module, which registers its roles; the role registries then take the
fixed orders of their role modules (`ORDER`: a name missing there comes after those listed). Adding a kind is one
new module under kope/bugs/ and one line in `KINDS` (docs/guide/architecture.md shows it).

    for kind in KINDS:
        print(kind.id, kind.bugs, kind.cues, kind.recipes, kind.edits, kind.mutations)
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Literal

from kope.bugs import (
    api,
    arith,
    bias,
    broadcast,
    constants,
    conv,
    cue,
    dead,
    dims,
    edit,
    epilogue,
    formula,
    generic,
    grid,
    indexing,
    loops,
    masks,
    mutation,
    norms,
    numerics,
    precision,
    recipe,
    reductions,
    strides,
    values,
    writes,
)
from kope.bugs.ids import BUG_IDS, KIND_IDS, BugId, KindId

__all__ = ["BUG_IDS", "KINDS", "KIND_IDS", "BugId", "Kind", "KindId", "Role", "edits_named", "kind", "kind_of"]

Role = Literal["cue", "recipe", "edit", "mutation"]


@dataclass(frozen=True)
class Kind:
    """One bug kind: its module and the taxonomy ids it is the home of; its roles are read off the registries."""

    id: KindId
    module: ModuleType
    bugs: tuple[BugId, ...] = ()
    """The taxonomy ids whose cues, recipes and mutations live here (none for the kinds of general edits: values,
    dead, generic, whose operators repair any bug)."""

    @property
    def summary(self) -> str:
        return (self.module.__doc__ or "").strip().splitlines()[0] if self.module.__doc__ else ""

    def _own(self, registered: dict[str, object]) -> tuple[str, ...]:
        return tuple(name for name, fn in registered.items() if getattr(fn, "__module__", "") == self.module.__name__)

    @property
    def cues(self) -> tuple[str, ...]:
        """Names of its cues (keys of kope.bugs.cue.CUES), in `detect`'s order."""
        return self._own(dict(cue.CUES))

    @property
    def recipes(self) -> tuple[str, ...]:
        """Names of its recipes (keys of kope.bugs.recipe.RECIPES)."""
        return self._own(dict(recipe.RECIPES))

    @property
    def edits(self) -> tuple[str, ...]:
        """Names of its repair operators (keys of kope.bugs.edit.OPERATORS), in the search's order."""
        return self._own({name: fn for name, (_, fn) in edit.OPERATORS.items()})

    @property
    def mutations(self) -> tuple[str, ...]:
        """Names of its mutations (keys of kope.bugs.mutation.OPERATORS)."""
        return self._own({name: type(op) for name, op in mutation.OPERATORS.items()})

    def role(self, role: Role) -> tuple[str, ...]:
        return {"cue": self.cues, "recipe": self.recipes, "edit": self.edits, "mutation": self.mutations}[role]


KINDS: tuple[Kind, ...] = (
    Kind("masks", masks, ("missing-mask", "mask-off-by-one", "padding-in-reduction")),
    Kind("grid", grid, ("grid-too-small", "uninitialized-output")),
    Kind("loops", loops, ("loop-bound",)),
    Kind("strides", strides, ("wrong-stride",)),
    Kind("indexing", indexing, ("index-shift", "missing-batch-offset")),
    Kind("broadcast", broadcast, ("broadcast-error",)),
    Kind("reductions", reductions, ("wrong-normalizer", "accumulator-reset", "wrong-reduction-init")),
    Kind("constants", constants, ("wrong-constant",)),
    Kind("numerics", numerics, ("numerical-instability", "wrong-epsilon")),
    Kind("precision", precision, ("precision-loss", "dtype-mismatch")),
    Kind("writes", writes, ("missing-atomic",)),
    Kind("values", values),
    Kind("dead", dead),
    Kind("generic", generic),
    Kind("formula", formula),
    Kind("arith", arith),
    Kind("bias", bias),
    Kind("epilogue", epilogue),
    Kind("dims", dims),
    Kind("norms", norms),
    Kind("api", api, ("api-misuse",)),
    Kind("conv", conv),
)
"""Every kind, one line each. The order is that of listings; the roles' orders are their modules' `ORDER`."""

cue.in_order(cue.CUES)
cue.in_order(cue.DESCRIPTIONS)
recipe.in_order(recipe.RECIPES)
recipe.in_order(recipe.RECIPE_DESCRIPTIONS)
edit.in_order(edit.OPERATORS)
mutation.in_order(mutation.OPERATORS)


def kind(kind_id: str) -> Kind:
    """The kind of this id; KeyError when there is none."""
    for found in KINDS:
        if found.id == kind_id:
            return found
    raise KeyError(f"unknown bug kind {kind_id!r}; known: {', '.join(KIND_IDS)}")


def kind_of(bug: str) -> Kind | None:
    """The kind that is the home of a taxonomy id (None for an id no kind holds, such as a user pattern's)."""
    return next((k for k in KINDS if bug in k.bugs), None)


def edits_named(names: list[str]) -> list[str]:
    """Repair operators named by a pattern's `edits`: a kind's id stands for all of its edits, an operator's name for
    itself; in the search's order, without repeats. Unknown names are left out (`kope kb validate` reports them)."""
    wanted: set[str] = set()
    for name in names:
        if name in KIND_IDS:
            wanted.update(kind(name).edits)
        elif name in edit.OPERATORS:
            wanted.add(name)
    return [name for name in edit.OPERATORS if name in wanted]
