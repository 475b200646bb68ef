"""The cue registry: the parsed candidate a cue reads, the `cue` decorator, and `detect`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import cached_property

from pydantic import BaseModel, ConfigDict

from kope.knowledge.analysis import Program
from kope.source import ParsedSource, call_name


class CueHit(BaseModel):
    """One place where a cue appears in a candidate (an item of a diagnosis's `cues`)."""

    model_config = ConfigDict(frozen=True)

    cue: str
    """The cue's name (a key of `CUES`)."""
    line: int
    """The line it points at (1-based; 0 when the node has none)."""
    text: str
    """That line of the source, stripped."""


class Source(ParsedSource):
    """A parsed candidate (kope.source) with its kernels' dataflow facts."""

    @cached_property
    def program(self) -> Program:
        """Kernels with their dataflow facts, and their launches (kope.knowledge.analysis)."""
        return Program(self)

    def kernel_calls(self, *names: str) -> Iterator[ast.Call]:
        """Calls inside kernels to `tl.<name>` (or any attribute/name ending in one of `names`)."""
        for node in self.kernel_nodes():
            if isinstance(node, ast.Call) and call_name(node, last=True) in names:
                yield node


Detector = Callable[[Source], Iterator[ast.AST]]


CUES: dict[str, Detector] = {}


DESCRIPTIONS: dict[str, str] = {}


def cue(name: str, description: str) -> Callable[[Detector], Detector]:
    def register(fn: Detector) -> Detector:
        CUES[name] = fn
        DESCRIPTIONS[name] = description
        return fn

    return register


def detect(source_text: str, names: list[str] | None = None) -> list[CueHit]:
    """Run the named cues (all of them by default) over a candidate's source."""
    source = Source.parse(source_text)
    if source is None:
        return []
    hits: list[CueHit] = []
    for name in names if names is not None else list(CUES):
        detector = CUES.get(name)
        if detector is None:
            continue
        seen: set[int] = set()
        try:
            nodes = list(detector(source))
        except RecursionError:  # nested deeper than the cue recurses (hostile or generated): no hit, no crash
            continue
        for node in nodes:
            number = getattr(node, "lineno", 0)
            if number not in seen:
                seen.add(number)
                hits.append(CueHit(cue=name, line=number, text=source.line(node)))
    return hits
