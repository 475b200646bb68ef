"""Code cues: detectors over a kernel's source that point at a known bug.

Each cue is a function from the parsed candidate to the lines where the cue appears. Patterns
name cues in `code_cues`; `kope kb validate` checks the names exist. Cues look at Triton kernel
bodies (functions decorated with `triton.jit`) unless they say otherwise.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CueHit:
    cue: str
    line: int
    text: str


@dataclass
class Source:
    """A parsed candidate: its tree, lines and Triton kernels."""

    text: str
    tree: ast.Module
    lines: list[str]
    kernels: list[ast.FunctionDef] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> Source | None:
        try:
            tree = ast.parse(text)
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


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


@cue("load-without-mask", "a tl.load of a block of pointers without a mask")
def load_without_mask(source: Source) -> Iterator[ast.AST]:
    for call in source.kernel_calls("load"):
        if _keyword(call, "mask") is None and len(call.args) < 2 and _involves_arange(source, call.args[0] if call.args else None):
            yield call


@cue("store-without-mask", "a tl.store of a block of pointers without a mask")
def store_without_mask(source: Source) -> Iterator[ast.AST]:
    for call in source.kernel_calls("store"):
        if _keyword(call, "mask") is None and len(call.args) < 3 and _involves_arange(source, call.args[0] if call.args else None):
            yield call


def _involves_arange(source: Source, expr: ast.expr | None) -> bool:
    """Whether a pointer expression is built from tl.arange offsets (a block, not a scalar)."""
    if expr is None:
        return False
    vectors = _arange_names(source)
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in vectors:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "arange":
            return True
    return False


def _arange_names(source: Source) -> set[str]:
    names: set[str] = set()
    changed = True
    assigns = [n for n in source.kernel_nodes() if isinstance(n, ast.Assign | ast.AugAssign)]
    while changed:
        changed = False
        for node in assigns:
            value = node.value
            vector = any(
                (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "arange")
                or (isinstance(inner, ast.Name) and inner.id in names)
                for inner in ast.walk(value)
            )
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if vector and isinstance(target, ast.Name) and target.id not in names:
                    names.add(target.id)
                    changed = True
    return names
