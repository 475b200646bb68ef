"""The cue registry: the parsed candidate a cue reads, the `cue` decorator, and `detect`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from kope import syntax
from kope.knowledge.analysis import (
    Program,
)


class CueHit(BaseModel):
    """One place where a cue appears in a candidate (an item of a diagnosis's `cues`)."""

    model_config = ConfigDict(frozen=True)

    cue: str
    """The cue's name (a key of `CUES`)."""
    line: int
    """The line it points at (1-based; 0 when the node has none)."""
    text: str
    """That line of the source, stripped."""


@dataclass
class Source:
    """A parsed candidate: its tree, lines and Triton kernels."""

    text: str
    tree: ast.Module
    lines: list[str]
    kernels: list[ast.FunctionDef] = field(default_factory=list)
    _program: Program | None = field(default=None, repr=False)

    @property
    def program(self) -> Program:
        """Kernels with their dataflow facts, and their launches (kope.knowledge.analysis)."""
        if self._program is None:
            self._program = Program(self.tree)
        return self._program

    @classmethod
    def parse(cls, text: str) -> Source | None:
        try:
            tree = syntax.parse(text)
        except (SyntaxError, ValueError):
            return None
        kernels = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            and any("jit" in ast.unparse(d) or "autotune" in ast.unparse(d) for d in node.decorator_list)
        ]
        return cls(text=text, tree=tree, lines=text.splitlines(), kernels=kernels)

    def line(self, node: ast.AST) -> str:
        number = getattr(node, "lineno", 0)
        return self.lines[number - 1].strip() if 0 < number <= len(self.lines) else ""

    def kernel_nodes(self) -> Iterator[ast.AST]:
        for kernel in self.kernels:
            yield from ast.walk(kernel)

    def kernel_calls(self, *names: str) -> Iterator[ast.Call]:
        """Calls inside kernels to `tl.<name>` (or any attribute/name ending in one of `names`)."""
        for node in self.kernel_nodes():
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if called in names:
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
        for node in detector(source):
            number = getattr(node, "lineno", 0)
            if number not in seen:
                seen.add(number)
                hits.append(CueHit(cue=name, line=number, text=source.line(node)))
    return hits
