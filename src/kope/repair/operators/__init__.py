"""Repair operators: families of small edits a kernel engineer makes, each with a taxonomy id.

An operator looks at a parsed candidate (`Program`) and yields every edit of its family it can make
(`Edit`: operator, taxonomy id, the line it touches, a one-line description and the edited source).
Operators do not judge; the search (kope.repair.search) decides which to try first from the diagnosis
and keeps what the evaluator says is better. The operators live in one module per family (masks,
grid, loops, strides, offsets, reductions, constants, numerics, values, dead, generic, formula, arith); this
package holds the registry, in one fixed order (the order of `edits` and of ties in the search).

    program = Program.parse(source, reference=task.source)
    for edit in edits(program):
        print(edit.operator, edit.label, edit.line, edit.description)
"""

from __future__ import annotations

from kope.repair.operators import (
    arith,
    constants,
    dead,
    formula,
    generic,
    grid,
    loops,
    masks,
    numerics,
    offsets,
    reductions,
    strides,
    values,
)
from kope.repair.operators._core import OPERATORS, Edit, Operator, Program, edits, operator

__all__ = ["OPERATORS", "ORDER", "Edit", "Operator", "Program", "edits", "operator"]

_FAMILIES = (
    *(masks, grid, loops, strides, offsets, reductions, constants, numerics, values, dead, generic),
    *(formula, arith),
)

ORDER = (
    "compare-flip",
    "floor-to-cdiv",
    "loop-bound",
    "stride-argument",
    "stride-name",
    "stride-swap",
    "grid-axis",
    "stride-factor",
    "offset-term",
    "index-shift",
    "other-identity",
    "reduction-init",
    "accumulator-move",
    "scan-kind",
    "constant",
    "missing-factor",
    "drop-operation",
    "add-mask",
    "max-subtraction",
    "broadcast-swap",
    "compare-operand",
    "grid-swap",
    "pid-swap",
    "floor-mod",
    "sibling-offset",
    "loop-offset",
    "advance-stride",
    "divisor",
    "upcast",
    "reduction-swap",
    "index-scalar",
    "block-scale",
    "mask-clause",
    "accumulate",
    "nested-factor",
    "host-dtype",
    "sign",
    "branch-swap",
    "reduce-axis",
    "xlogy",
    "dead-value",
    "dead-position",
    "dead-mask",
    "dead-stride",
    "zero-init",
    "true-division",
    "into-call",
    "abs-argument",
    "clamp-exponent",
    "padding-where",
    "index-divide",
    "named-index",
    "atomic-store",
    "alloc-dtype",
    "argument-swap",
    "running-init",
    "drop-downcast",
    "log-base",
    "shared-term",
    "index-factor",
    "log-one-plus",
    "host-size",
    "grid-product",
    "complement",
    "name-swap",
    "drop-term",
    "int-literal",
    "if-branch",
    "formula-store",
    "formula-swap",
    "self-operand",
    "cross-program-atomic",
    "norm-sqrt",
    "drop-cap",
)
"""The registry's order; an operator missing here comes after these."""


def _in_order() -> None:
    ordered = {**{name: OPERATORS[name] for name in ORDER if name in OPERATORS}, **OPERATORS}
    OPERATORS.clear()
    OPERATORS.update(ordered)


_in_order()
