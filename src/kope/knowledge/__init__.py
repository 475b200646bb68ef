"""The knowledge base: bug patterns (taxonomy, cues, recipes, worked examples) and their retrieval.

kb = KnowledgeBase.load()           # shipped patterns, plus the user's
hits = detect(source)               # cue hits in a candidate
edits = apply("add_mask", source)   # a recipe's candidate repairs
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.knowledge.base import KnowledgeBase, KnowledgeError
    from kope.knowledge.cues import CueHit, detect
    from kope.knowledge.features import Features
    from kope.knowledge.recipes import apply

_HOMES = {
    "CueHit": "kope.knowledge.cues",
    "Features": "kope.knowledge.features",
    "KnowledgeBase": "kope.knowledge.base",
    "KnowledgeError": "kope.knowledge.base",
    "apply": "kope.knowledge.recipes",
    "detect": "kope.knowledge.cues",
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
