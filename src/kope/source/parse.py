"""One parsed candidate: its text, lines, `ast` tree, imports, Triton kernels and their launches.

Every module that reads a candidate's code (the integrity rules, the code cues, the recipes, the
mutation operators, the repair operators and the launch search) starts from a `ParsedSource`, so
"is this function a Triton kernel?" and "what does this call call?" have one answer each.

The kernel rule: a function is a Triton kernel when one of its decorators, called or not
(`@triton.jit`, `@triton.jit(do_not_specialize=...)`), names `triton.jit` through the file's
imports (`import triton as tr` → `@tr.jit`, `from triton import jit` → `@jit`,
`import triton.language as tl` → `@tl.jit`), wherever it sits among stacked decorators
(`@triton.autotune(...)` and `@triton.heuristics(...)` above it). A root the file never binds
(`triton`, `tl`) keeps its conventional meaning, so snippets without imports still read as
kernels; a name the file binds to something else (`import torch as tl`, a local `def jit`) does
not. `autotune`/`heuristics` alone do not make a kernel: they wrap one.

A launch is `kernel[grid](...)` (the kernel by name or as an attribute, `self.kernel[grid]`) or
`kernel.run(...)`, anywhere in the file outside the kernels.

    parsed = ParsedSource.parse(text)      # None when the text does not parse
    for kernel in parsed.kernels: ...
    for launch in parsed.launches: launch.kernel, launch.grid, launch.host
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Self

from kope import syntax

if TYPE_CHECKING:
    import libcst as cst

JIT_PATHS = frozenset({"triton.jit", "triton.language.jit", "triton.runtime.jit.jit"})
"""What a kernel's decorator resolves to."""
AUTOTUNE_PATHS = frozenset({"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"})
HEURISTICS_PATHS = frozenset({"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"})
CONVENTIONAL_ROOTS = {"triton": "triton", "tl": "triton.language"}
"""The meaning of these roots in a file that never binds them."""


def _libcst() -> Any:
    """libcst when it is loaded (a libcst node cannot exist before), else None: `ast` users never import it."""
    return sys.modules.get("libcst")


def dotted(node: object) -> str:
    """`a.b.c` for a name or attribute chain (an `ast` or a libcst node); "" for anything else."""
    parts: list[str] = []
    while True:
        name = _name_of(node)
        if name is not None:
            parts.append(name)
            return ".".join(reversed(parts))
        attribute = _attribute_of(node)
        if attribute is None:
            return ""
        node, attr = attribute
        parts.append(attr)


def names_in(node: ast.AST | None) -> set[str]:
    """The names (`ast.Name` ids) an expression or statement mentions, at any depth; none for None."""
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _name_of(node: object) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    cst = _libcst()
    return str(node.value) if cst is not None and isinstance(node, cst.Name) else None


def _attribute_of(node: object) -> tuple[object, str] | None:
    if isinstance(node, ast.Attribute):
        return node.value, node.attr
    cst = _libcst()
    if cst is not None and isinstance(node, cst.Attribute):
        return node.value, str(node.attr.value)
    return None


def _callee(node: object) -> object | None:
    if isinstance(node, ast.Call):
        return node.func
    cst = _libcst()
    return node.func if cst is not None and isinstance(node, cst.Call) else None


def call_name(node: object, *, last: bool = False) -> str:
    """The name a call calls: `tl.load` for `tl.load(...)` (`load` with `last=True`), for an `ast` or
    a libcst node; "" when `node` is not a call or its callee is not a name (`kernel[grid](...)`).

    `last=True` gives the attribute of any receiver (`x.to(...)`, `f().sum(...)` → `to`, `sum`)."""
    func = _callee(node)
    if func is None:
        return ""
    if last:
        attribute = _attribute_of(func)
        if attribute is not None:
            return attribute[1]
        return _name_of(func) or ""
    return dotted(func)


@dataclass(frozen=True)
class LaunchSite:
    """One launch of a kernel of the file."""

    call: ast.Call
    kernel: ast.FunctionDef
    grid: ast.expr | None
    """The subscript of `kernel[grid](...)`; the `grid=` keyword of `kernel.run(...)`, or None."""
    host: ast.FunctionDef | None
    """The outermost function around the launch (None at module level)."""


class ParsedSource:
    """A candidate's source parsed once: text, lines, tree, imports, kernels, launches."""

    def __init__(self, text: str, tree: ast.Module) -> None:
        self.text = text
        self.tree = tree
        self.lines = text.splitlines()
        self.aliases = _aliases(tree)
        """Names bound by imports and module-level aliases -> the dotted path they stand for."""
        self._bound = _bound_names(tree)
        self.kernels: list[ast.FunctionDef] = [
            node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and self.is_kernel(node)
        ]
        """Triton kernels, in `ast.walk` order."""

    @classmethod
    def parse(cls, text: str) -> Self | None:
        """None when the text is not Python (or is nested too deep to parse)."""
        try:
            tree = syntax.parse(text)
        except (SyntaxError, ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            return None
        return cls(text, tree)

    # -- names ------------------------------------------------------------------------------

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted path an expression names through the file's imports, or None
        (`F.relu` -> `torch.nn.functional.relu`, `getattr(torch, "relu")` -> `torch.relu`)."""
        return _resolve(node, self.aliases)

    def path_of(self, node: object) -> str:
        """What a name or attribute chain (`ast` or libcst) stands for: resolved through the imports,
        a root the file never binds read conventionally (`tl` = `triton.language`); "" if unknown."""
        text = dotted(node)
        if not text:
            return ""
        root, _, rest = text.partition(".")
        if root in self.aliases:
            base = self.aliases[root]
        elif root in self._bound:
            return ""
        else:
            base = CONVENTIONAL_ROOTS.get(root, root)
        return f"{base}.{rest}" if rest else base

    def _decorator_paths(self, decorators: list[object]) -> set[str]:
        paths = set()
        for decorator in decorators:
            target = getattr(decorator, "decorator", decorator)  # libcst wraps each in a Decorator
            paths.add(self.path_of(_callee(target) or target))
        return paths

    # -- kernels ----------------------------------------------------------------------------

    def is_kernel(self, function: object) -> bool:
        """Whether a function definition (`ast` or libcst) is a Triton kernel (the module docstring's rule)."""
        cst = _libcst()
        if isinstance(function, ast.FunctionDef):
            decorators: list[object] = list(function.decorator_list)
        elif cst is not None and isinstance(function, cst.FunctionDef):
            decorators = list(function.decorators)
        else:
            return False
        return bool(self._decorator_paths(decorators) & JIT_PATHS)

    def autotune(self, kernel: ast.FunctionDef) -> ast.Call | None:
        """The `@triton.autotune(...)` call decorating a kernel, if any."""
        return self._decorator_call(kernel, AUTOTUNE_PATHS)

    def heuristics(self, kernel: ast.FunctionDef) -> ast.Call | None:
        """The `@triton.heuristics(...)` call decorating a kernel, if any."""
        return self._decorator_call(kernel, HEURISTICS_PATHS)

    def _decorator_call(self, kernel: ast.FunctionDef, paths: frozenset[str]) -> ast.Call | None:
        for decorator in kernel.decorator_list:
            if isinstance(decorator, ast.Call) and self.path_of(decorator.func) in paths:
                return decorator
        return None

    @cached_property
    def kernel_names(self) -> dict[str, ast.FunctionDef]:
        """Kernels by name (a later definition of a name wins, as it does when the file runs)."""
        return {kernel.name: kernel for kernel in self.kernels}

    def kernel_nodes(self) -> Iterator[ast.AST]:
        """Every node inside the kernels (their decorators included)."""
        for kernel in self.kernels:
            yield from ast.walk(kernel)

    def host_nodes(self) -> Iterator[ast.AST]:
        """Every node outside the kernels' bodies (their decorators are host code: they run on import)."""
        inside = {id(kernel) for kernel in self.kernels}
        stack: list[ast.AST] = [self.tree]
        while stack:
            node = stack.pop()
            yield node
            if id(node) in inside:
                assert isinstance(node, ast.FunctionDef)
                stack.extend(node.decorator_list)
                continue
            stack.extend(ast.iter_child_nodes(node))

    # -- launches ---------------------------------------------------------------------------

    def launched_kernel(self, call: ast.Call) -> tuple[ast.FunctionDef, ast.expr | None] | None:
        """The kernel a call launches and its grid, when the call is a launch."""
        func = call.func
        if isinstance(func, ast.Subscript):
            kernel = self._kernel_reference(func.value)
            return (kernel, func.slice) if kernel is not None else None
        if isinstance(func, ast.Attribute) and func.attr == "run":
            kernel = self._kernel_reference(func.value)
            grid = next((k.value for k in call.keywords if k.arg == "grid"), None)
            return (kernel, grid) if kernel is not None else None
        return None

    @cached_property
    def kernel_aliases(self) -> dict[str, tuple[ast.FunctionDef, ast.Call]]:
        """Names bound to a kernel that a call wraps (`tuned = triton.autotune(...)(kernel)`): the kernel, and the
        call that wraps it (`triton.autotune(...)`)."""
        found: dict[str, tuple[ast.FunctionDef, ast.Call]] = {}
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            value = node.value
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Call) and len(value.args) == 1):
                continue
            wrapped = value.args[0]
            kernel = self.kernel_names.get(wrapped.id) if isinstance(wrapped, ast.Name) else None
            if kernel is not None and self.path_of(value.func.func) in AUTOTUNE_PATHS | HEURISTICS_PATHS:
                found[node.targets[0].id] = (kernel, value.func)
        return found

    def _kernel_reference(self, node: ast.expr) -> ast.FunctionDef | None:
        if isinstance(node, ast.Name):
            alias = self.kernel_aliases.get(node.id)
            return self.kernel_names.get(node.id) or (alias[0] if alias else None)
        if isinstance(node, ast.Attribute):
            return self.kernel_names.get(node.attr)
        return None

    @cached_property
    def launches(self) -> list[LaunchSite]:
        """Every launch of a kernel of the file, in `ast.walk` order."""
        owner: dict[int, ast.FunctionDef] = {}
        for function in ast.walk(self.tree):
            if isinstance(function, ast.FunctionDef) and not self.is_kernel(function):
                for inner in ast.walk(function):
                    owner.setdefault(id(inner), function)
        inside = {id(node) for node in self.kernel_nodes()}
        found = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and id(node) not in inside:
                launched = self.launched_kernel(node)
                if launched is not None:
                    found.append(LaunchSite(node, launched[0], launched[1], owner.get(id(node))))
        return found

    # -- text -------------------------------------------------------------------------------

    def line(self, node: ast.AST) -> str:
        """The stripped source line a node starts on ("" when it has none)."""
        number = getattr(node, "lineno", 0)
        return self.lines[number - 1].strip() if 0 < number <= len(self.lines) else ""

    @cached_property
    def line_offsets(self) -> list[int]:
        """The character offset where each line starts (and, last, the length of the text)."""
        offsets = [0]
        for line in self.text.splitlines(keepends=True):
            offsets.append(offsets[-1] + len(line))
        return offsets

    def offset(self, line: int, byte_col: int) -> int:
        """The character offset of an `ast` position (columns are UTF-8 bytes)."""
        start = self.line_offsets[line - 1]
        end = self.text.find("\n", start)
        text = self.text[start : end if end >= 0 else len(self.text)]
        return start + len(text.encode()[:byte_col].decode(errors="ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of a node's text, so that edits can splice the source and keep the rest byte for byte."""
        line: int = getattr(node, "lineno", 1)
        end_line: int = getattr(node, "end_lineno", None) or line
        return (
            self.offset(line, getattr(node, "col_offset", 0)),
            self.offset(end_line, getattr(node, "end_col_offset", None) or 0),
        )

    def code(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def replace(self, node: ast.AST, text: str) -> str:
        """The source with a node's text replaced."""
        start, end = self.span(node)
        return self.text[:start] + text + self.text[end:]

    @cached_property
    def cst_module(self) -> cst.Module:
        """The libcst tree, built on first use (for the modules that rewrite code with libcst)."""
        import libcst

        return libcst.parse_module(self.text)


def _aliases(tree: ast.Module) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in tree.body:  # module-level aliases: `F = torch.nn.functional`, `jit = triton.jit`
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            path = _resolve(node.value, aliases)
            if path:
                aliases[node.targets[0].id] = path
    return aliases


def _resolve(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        base = _resolve(node.args[0], aliases)
        return f"{base}.{node.args[1].value}" if base else None
    return None


def _bound_names(tree: ast.Module) -> set[str]:
    """Names the file binds otherwise than by import: definitions and assignments anywhere."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound
