"""The cue role: the parsed candidate a cue reads (`Source`), the `cue` decorator, `detect`, and the helpers cues of
several kinds share.

A cue is a function from the parsed candidate to the nodes where it appears. Patterns name cues in `code_cues`;
`kope kb validate` checks the names exist. Cues look at Triton kernel bodies unless they say otherwise. The cues
themselves live in the kinds' modules (kope.bugs.masks, ...); `ORDER` is the order `detect` runs them in.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict

from kope.bugs.analysis import Dataflow, Kernel, calls_in, expand, names_in
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
    def dataflow(self) -> Dataflow:
        """Kernels with their dataflow facts, and their launches (kope.bugs.analysis)."""
        return Dataflow(self)

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


def _kernels(source: Source) -> Iterator[Kernel]:
    for node in source.kernels:
        kernel = source.dataflow.kernel_of(node)
        if kernel is not None:
            yield kernel


def _kernel_loops(kernel: Kernel) -> Iterator[ast.For]:
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.For):
            yield node


def _reduction_result(expr: ast.AST, kernel: Kernel) -> bool:
    return any(True for node in expand(expr, kernel, depth=2) for _ in calls_in(node, "sum", "max", "min", "cumsum"))


def _derived_from(kernel: Kernel, name: str) -> set[str]:
    """Names whose values use `name` (directly or transitively)."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for other, values in kernel.assigns.items():
            if other not in found and any(current in names_in(v) for v in values):
                found.add(other)
                frontier.append(other)
    return found


def range_call(loop: ast.For) -> ast.Call | None:
    it = loop.iter
    if isinstance(it, ast.Call) and call_name(it, last=True) in ("range", "static_range"):
        return it
    return None


ORDER = (
    "load-without-mask",
    "store-without-mask",
    "mask-inclusive-bound",
    "padding-reaches-reduction",
    "grid-floor-div",
    "grid-axis-missing",
    "loop-stops-early",
    "store-loop-skips-start",
    "single-inner-stride",
    "duplicate-stride-arg",
    "foreign-stride",
    "unused-stride-param",
    "unused-program-id",
    "offset-literal-shift",
    "block-relative-index",
    "divide-by-block-size",
    "divide-by-n-minus-one",
    "suspicious-constant",
    "exp2-without-log2e",
    "store-shared-address",
    "partial-store-into-empty",
    "half-precision-cast",
    "exp-without-max-shift",
    "inf-minus-inf",
    "eps-outside-sqrt",
    "rsqrt-without-eps",
    "unused-eps-param",
    "accumulator-overwritten-in-loop",
    "max-init-zero",
    "online-normalizer-init",
    "broadcast-axis-mismatch",
    "integer-buffer-for-float",
    "float-cast-to-int",
    "half-precision-buffer",
    "runtime-constexpr",
)
"""The order `detect` runs the cues in, and so the order of its hits (and of a diagnosis's `cues`): the
order of the single module they came from. A cue missing here runs after these."""


def in_order(registry: dict[str, Any]) -> None:
    """Put `registry` in `ORDER` (kinds register in import order); names missing there come after, in theirs."""
    ordered = {**{name: registry[name] for name in ORDER if name in registry}, **registry}
    registry.clear()
    registry.update(ordered)
