"""The typed ids of kope.bugs: a bug kind (`KindId`, a module of kope/bugs/) and a built-in taxonomy id (`BugId`).

They sit apart from the registry so that the role modules (kope.bugs.edit, kope.bugs.mutation) can type their
labels without importing the kinds.
"""

from __future__ import annotations

from typing import Literal, get_args

KindId = Literal[
    "masks",
    "grid",
    "loops",
    "strides",
    "indexing",
    "broadcast",
    "reductions",
    "constants",
    "numerics",
    "precision",
    "writes",
    "values",
    "dead",
    "generic",
    "formula",
    "arith",
    "bias",
    "epilogue",
    "dims",
    "norms",
    "api",
    "conv",
]
"""A kind: a family of bugs whose cues, recipes, edits and mutations share one module (kope.bugs.<id>)."""

BugId = Literal[
    "missing-mask",
    "mask-off-by-one",
    "padding-in-reduction",
    "grid-too-small",
    "loop-bound",
    "wrong-stride",
    "index-shift",
    "wrong-normalizer",
    "wrong-constant",
    "missing-atomic",
    "precision-loss",
    "numerical-instability",
    "wrong-epsilon",
    "accumulator-reset",
    "broadcast-error",
    "wrong-reduction-init",
    "dtype-mismatch",
    "missing-batch-offset",
    "uninitialized-output",
    "api-misuse",
]
"""The bug taxonomy's built-in ids (DESIGN.md; the knowledge base's shipped patterns). User patterns add others."""

KIND_IDS: tuple[KindId, ...] = get_args(KindId)
BUG_IDS: tuple[BugId, ...] = get_args(BugId)
