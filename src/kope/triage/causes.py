"""A run summarised for a person: each cause of failure once (with its count and an example), and the
classes kope gave against the verdicts the candidates' own pipeline gave.

    causes(rows)              -> [Cause(kind="runtime", message="... AssertionError at line N: ...", count=95, ...)]
    verdict_table(rows, items) -> {"pass": {"pass": 16, "near-miss": 6, ...}, "fail": {...}}

A cause is a row's error kind and its message with what varies between candidates taken out (numbers,
paths, addresses), so 95 candidates failing the same way make one line, not 95.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel

from kope.text import sanitize
from kope.triage.layout import Item, natural_key
from kope.triage.worker import CLASSES, TriageRow

_QUOTED_PATH = re.compile(r"""(["'])(?:[A-Za-z]:)?[/\\][^"'\n]*\1""")
_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?(?:/[\w.@+~-]+){2,}/?")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACES = re.compile(r"\s+")
_LONGEST = 200
VERDICTS = ("pass", "fail", "error", "unknown")
"""A pipeline's verdicts as manifests give them, in the order tables list them (other words come after)."""


class Cause(BaseModel):
    """One way candidates failed: the class they got, the error kind, the message with numbers and paths
    taken out; how many candidates, and one of them."""

    klass: str
    kind: str
    message: str
    count: int
    example: str
    """A candidate id that failed this way."""
    example_message: str = ""
    """That candidate's own message (first line)."""


def normalise(message: str) -> str:
    """The first non-empty line of a message, with paths, addresses and numbers replaced by placeholders."""
    line = _first(message)
    line = _QUOTED_PATH.sub("<path>", line)
    line = _PATH.sub("<path>", line)
    line = _HEX.sub("<address>", line)
    line = _NUMBER.sub("N", line)
    line = _SPACES.sub(" ", line).strip()
    return line if len(line) <= _LONGEST else line[: _LONGEST - 1] + "…"


def cause_of(row: TriageRow) -> tuple[str, str, str]:
    """(kind, normalised message, the row's own first line) of a row that did not pass."""
    if row.error:
        return "kope failed", normalise(row.error), _first(row.error)
    if row.error_kind:
        return row.error_kind, normalise(row.error_message or ""), _first(row.error_message or "")
    if row.findings:
        findings = ", ".join(row.findings)
        return ("gates" if row.before == "cheat" else "wrong values, gates warned"), findings, findings
    if row.before == "near-miss":
        return "wrong values", "", ""
    return row.status or row.before, "", ""


def _first(message: str) -> str:
    line = next((part.strip() for part in sanitize(message).splitlines() if part.strip()), "")
    return line if len(line) <= _LONGEST else line[: _LONGEST - 1] + "…"


def causes(rows: Iterable[TriageRow]) -> list[Cause]:
    """Every cause among the rows that did not pass (before repair), the most common first."""
    found: dict[tuple[str, str, str], Cause] = {}
    for row in sorted(rows, key=lambda r: natural_key(r.id)):
        if row.before == "pass":
            continue
        kind, message, own = cause_of(row)
        key = (row.before, kind, message)
        if key in found:
            found[key].count += 1
        else:
            found[key] = Cause(
                klass=row.before, kind=kind, message=message, count=1, example=row.id, example_message=own
            )
    order = {name: index for index, name in enumerate((*CLASSES, "error"))}
    return sorted(
        found.values(), key=lambda c: (-c.count, order.get(c.klass, len(order)), c.kind, natural_key(c.message))
    )


def by_field(rows: Sequence[TriageRow], items: Mapping[str, Item], field: str) -> dict[str, dict[str, int]]:
    """Class counts (before repair) per value of an item's field (`source_verdict`, `model`); empty when no
    item has a value for it. Rows whose item has none are counted under `unknown`."""
    if not any(getattr(item, field) for item in items.values()):
        return {}
    names = (*CLASSES, "error")
    table: dict[str, dict[str, int]] = {}
    for row in rows:
        item = items.get(row.id)
        value = (getattr(item, field) if item is not None else None) or "unknown"
        counts = table.setdefault(value, dict.fromkeys(names, 0))
        counts[row.before] = counts.get(row.before, 0) + 1
    known = {name: index for index, name in enumerate(VERDICTS)}
    return {key: table[key] for key in sorted(table, key=lambda k: (known.get(k, len(known)), natural_key(k)))}


def verdict_table(rows: Sequence[TriageRow], items: Mapping[str, Item]) -> dict[str, dict[str, int]]:
    """Source verdict (pass, fail, error, unknown) → kope's class → candidates; empty without verdicts."""
    return by_field(rows, items, "source_verdict")
