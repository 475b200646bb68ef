"""Triage a generation pipeline's run: every candidate matched, classified, its near misses repaired.

from kope.triage import triage
summary = triage(Path("tasks"), Path("candidates"), Path("out"))
"""

from kope.triage.layout import Item, LayoutError, Matching, Unmatched, match
from kope.triage.run import TriageSummary, read_rows, triage
from kope.triage.worker import CLASSES, TriageRow, classify

__all__ = [
    "CLASSES",
    "Item",
    "LayoutError",
    "Matching",
    "TriageRow",
    "TriageSummary",
    "Unmatched",
    "classify",
    "match",
    "read_rows",
    "triage",
]
