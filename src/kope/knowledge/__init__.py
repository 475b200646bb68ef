"""The knowledge base: bug patterns (taxonomy, cues, recipes, worked examples) and their retrieval.

kb = KnowledgeBase.load()           # shipped patterns, plus the user's
hits = detect(source)               # cue hits in a candidate
edits = apply("add_mask", source)   # a recipe's candidate repairs
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.bugs.cue import CueHit, detect
    from kope.bugs.recipe import apply
    from kope.knowledge.base import KnowledgeBase, KnowledgeError
    from kope.knowledge.features import Features

_HOMES = {
    "CueHit": "kope.bugs.cue",
    "Features": "kope.knowledge.features",
    "KnowledgeBase": "kope.knowledge.base",
    "KnowledgeError": "kope.knowledge.base",
    "apply": "kope.bugs.recipe",
    "detect": "kope.bugs.cue",
}

__all__ = [
    "CueHit",
    "Features",
    "KnowledgeBase",
    "KnowledgeError",
    "apply",
    "detect",
]

__getattr__ = exports(__name__, _HOMES)
