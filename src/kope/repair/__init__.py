"""Zero-token repair: a bounded search over edits (recipes and mutation operators) at the diagnosed sites.

`RepairSearch.run` tries the diagnosis's recipes and the mutation operators at its evidence lines, a bounded
number of rounds, and keeps the best visible-case score; `explain` renders its rounds for `kope debug --explain`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.repair.explain import explain
    from kope.repair.search import RepairSearch, SearchConfig, SearchResult

_HOMES = {
    "RepairSearch": "kope.repair.search",
    "SearchConfig": "kope.repair.search",
    "SearchResult": "kope.repair.search",
    "explain": "kope.repair.explain",
}

__all__ = [
    "RepairSearch",
    "SearchConfig",
    "SearchResult",
    "explain",
]

__getattr__ = exports(__name__, _HOMES)
