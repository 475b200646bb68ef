"""Bug kinds: one module per kind of bug, holding its cue, its knowledge-base recipe, its search edits and its
bench mutation, over one source analysis (kope.bugs.analysis) and one registry (kope.bugs.registry).

    from kope.bugs import KINDS, detect, apply, edits, Program, mutants
    hits = detect(source)                                   # cue hits (diagnosis)
    fixes = apply("add-mask", source)                       # a recipe's candidate repairs (knowledge base)
    found = edits(Program.parse(source, reference=task))    # every repair operator's edits (search)
    bugged = mutants(source, "drop-mask")                   # injected bugs (bench)

The package loads every kind's module when it is first imported (the registry), so each role's registry is
complete whichever of kope.bugs' modules is imported first.
"""

from __future__ import annotations

from kope.bugs.cue import CUES, CueHit, detect
from kope.bugs.edit import OPERATORS, Edit, Program, edits
from kope.bugs.mutation import Mutant, Mutation, MutationError, mutants, mutate
from kope.bugs.recipe import RECIPES, apply
from kope.bugs.registry import BUG_IDS, KIND_IDS, KINDS, BugId, Kind, KindId, edits_named, kind, kind_of

__all__ = [
    "BUG_IDS",
    "CUES",
    "KINDS",
    "KIND_IDS",
    "OPERATORS",
    "RECIPES",
    "BugId",
    "CueHit",
    "Edit",
    "Kind",
    "KindId",
    "Mutant",
    "Mutation",
    "MutationError",
    "Program",
    "apply",
    "detect",
    "edits",
    "edits_named",
    "kind",
    "kind_of",
    "mutants",
    "mutate",
]
