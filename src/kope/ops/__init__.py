"""The built-in operator suite: KernelBench-format tasks, each with a correct Triton kernel.

`list_ops()` returns the catalog; `get_op(name)` finds one operator and raises `UnknownOpError`
(with the closest names) for a name that is not there.
"""

from __future__ import annotations

import difflib

from kope.ops.catalog import CATALOG, OpInfo

__all__ = ["OpInfo", "UnknownOpError", "get_op", "list_ops"]


class UnknownOpError(KeyError):
    """No operator of that name in the built-in suite."""


def list_ops(family: str | None = None) -> list[OpInfo]:
    return [op for op in CATALOG if family is None or op.family == family]


def get_op(name: str) -> OpInfo:
    for op in CATALOG:
        if op.name == name:
            return op
    close = difflib.get_close_matches(name, [op.name for op in CATALOG], n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise UnknownOpError(f"no operator named {name!r} in the built-in suite{hint}")
