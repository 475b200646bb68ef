"""The edit role (the repair search's operators): the parsed program (`Program`), the edit (`Edit`), the
`operator` decorator, `edits`, and the AST helpers the operators of several kinds share.

An operator looks at a parsed candidate (`Program`) and yields every edit of its family it can make (`Edit`:
operator, taxonomy id, the line it touches, a one-line description and the edited source). Operators do not judge;
the search (kope.repair.search) decides which to try first from the diagnosis and keeps what the evaluator says is
better. The operators live in the kinds' modules (kope.bugs.masks, ...); `ORDER` is the registry's order, the
order of `edits` and of ties in the search.

    program = Program.parse(source, reference=task.source)
    for edit in edits(program):
        print(edit.operator, edit.label, edit.line, edit.description)

Edits are made by splicing the source text at the node's position, so everything outside the edit is
kept byte for byte.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kope import syntax
from kope.bugs.analysis import constexprs_of, names_in, params_of
from kope.bugs.formulas import constants_of_calls
from kope.bugs.ids import BugId
from kope.source import LaunchSite, ParsedSource, call_name


@dataclass(frozen=True)
class Edit:
    operator: str
    label: BugId
    """The bug-taxonomy id this edit repairs."""
    line: int
    description: str
    source: str
    cue: str = ""
    """Why the operator finds this site suspicious on its own (two loads of one address, a loop-invariant load
    in a loop, one bound for two axes...); empty when it does not. The search ranks cued sites earlier."""
    grounded: bool = False
    """The cue is a contradiction the sources show, not a form that is often wrong: the sizes that bound a stride's
    indices are another dimension's, the reference transposes the operands a launch passes as stored, or it pools
    with floor division where the kernel divides with a ceiling. The search
    ranks it before the hypotheses' recipes."""


_ERROR_LINE = re.compile(r"\(candidate line (\d+):")
_ERROR_CHARS = 2000


@dataclass
class Program:
    """A parsed candidate (kope.source) with the reference's constants."""

    parsed: ParsedSource
    reference_constants: list[float] = field(default_factory=list)
    scale: float | None = None
    """The diagnosis's `scale` (output = scale x reference), when it measured one."""
    reference: str = ""
    """The reference's source (the formula operators read its activations: kope.bugs.reference)."""
    error: str = ""
    """The error the candidate's evaluation stopped on (the diagnosis's `error`): operators that mend what a
    compiler's message states exactly (kope.bugs.api's `carried-type`) read it; empty when it ran."""
    module_mode: str = "train"
    """The mode the evaluation runs both models in (`EvalOptions.module_mode`): kope.bugs.norms reads it."""
    _per_kernel: dict[tuple[str, int], list[str]] = field(default_factory=dict, repr=False, compare=False)
    """`strides` and `scalars` by kernel: every operator asks for them, often once per site."""

    @classmethod
    def parse(
        cls, text: str, reference: str = "", *, scale: float | None = None, error: str = "", module_mode: str = "train"
    ) -> Program | None:
        """None when the source does not parse (no operator applies)."""
        parsed = ParsedSource.parse(text)
        if parsed is None:
            return None
        constants = formula_constants(reference)
        return cls(parsed, constants, scale=scale, reference=reference, error=error, module_mode=module_mode)

    def error_line(self) -> int | None:
        """The candidate line the evaluation's error names (`(candidate line N: ...)`), if it names one (a bounded
        part of the message is read: the candidate's code can write it)."""
        at = _ERROR_LINE.search(self.error[:_ERROR_CHARS])
        return int(at.group(1)) if at is not None else None

    def launch_arguments(self, kernel: ast.FunctionDef) -> dict[str, ast.expr]:
        """The kernel's parameters mapped to the arguments of its first launch that passes them."""
        names = params_of(kernel)
        found: dict[str, ast.expr] = {}
        for site in self.parsed.launches:
            if site.kernel is not kernel or _unstarred(site.call, len(names)) is None:
                continue
            for name, arg in site_arguments(site).items():
                found.setdefault(name, arg)
        return found

    def strides(self, kernel: ast.FunctionDef) -> list[str]:
        """Stride parameters: named so, or passed `t.stride(i)` at a launch (`sxb`, `s_q`...)."""
        key = ("strides", id(kernel))
        if key not in self._per_kernel:
            launched = self.launch_arguments(kernel)
            self._per_kernel[key] = [
                p
                for p in params_of(kernel)
                if "stride" in p.lower() or (p in launched and ".stride(" in ast.unparse(launched[p]))
            ]
        return list(self._per_kernel[key])

    def scalars(self, kernel: ast.FunctionDef) -> list[str]:
        """Scalar parameters: neither pointers (bare terms of an address), strides nor `tl.constexpr`."""
        key = ("scalars", id(kernel))
        if key not in self._per_kernel:
            excluded = pointers_of(kernel) | set(self.strides(kernel)) | set(constexprs_of(kernel))
            self._per_kernel[key] = [p for p in params_of(kernel) if p not in excluded]
        return list(self._per_kernel[key])

    def tensors(self, kernel: ast.FunctionDef) -> dict[str, str]:
        """The host tensor behind each pointer and stride parameter, from the launch: `x_ptr` passed `x` (or
        `x.contiguous()`) and `sxb` passed `x.stride(0)` both map to `x`."""
        found: dict[str, str] = {}
        for name, arg in self.launch_arguments(kernel).items():
            if (
                isinstance(arg, ast.Call)
                and isinstance(arg.func, ast.Attribute)
                and arg.func.attr in ("stride", "size")
            ):
                arg = arg.func.value
            root = _tensor_root(arg)
            if root:
                found[name] = root
        return found

    def value_scalars(self, kernel: ast.FunctionDef) -> list[str]:
        """Scalar parameters given a value, not a size, at the launch (`self.beta`, a float): formula parameters. A
        helper that is never launched takes those of the launched kernels, by name."""
        key = ("values", id(kernel))
        if key in self._per_kernel:
            return list(self._per_kernel[key])
        launched = self.launch_arguments(kernel)
        if not launched:
            names = set(params_of(kernel))
            found = [s for k in self.kernels if self.launch_arguments(k) for s in self.value_scalars(k) if s in names]
        else:
            sizes = self.host_sizes()
            found = []
            for name in self.scalars(kernel):
                arg = launched.get(name)
                if arg is None or _is_size(arg, sizes):
                    continue
                if isinstance(arg, ast.Constant) and not isinstance(arg.value, float):
                    continue
                found.append(name)
        self._per_kernel[key] = found
        return list(found)

    def host_sizes(self) -> set[str]:
        """Host names bound to sizes (`M, K = x.shape`, `n = x.numel()`, `half = width // 2`), transitively."""
        sizes: set[str] = set()
        changed = True
        while changed:
            changed = False
            for node in self.host_nodes():
                if not isinstance(node, ast.Assign) or not _is_size(node.value, sizes):
                    continue
                if isinstance(node.value, ast.Tuple) and any(isinstance(t, ast.Name) for t in node.targets):
                    continue  # `grid = (triton.cdiv(n, B),)`: a tuple bound to one name is a grid, not a size
                for target in node.targets:
                    for name in names_in(target):
                        if name not in sizes:
                            sizes.add(name)
                            changed = True
        return sizes

    @property
    def text(self) -> str:
        return self.parsed.text

    @property
    def tree(self) -> ast.Module:
        return self.parsed.tree

    @property
    def kernels(self) -> list[ast.FunctionDef]:
        return self.parsed.kernels

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of a node (ast columns are UTF-8 bytes)."""
        return self.parsed.span(node)

    def code(self, node: ast.AST) -> str:
        return self.parsed.code(node)

    def replace(self, node: ast.AST, text: str) -> str:
        return self.parsed.replace(node, text)

    def lines_of(self, statement: ast.stmt) -> tuple[int, int]:
        """Character offsets of a statement's whole lines (from its first line's start to its last line's end)."""
        start = self.parsed.line_offsets[statement.lineno - 1]
        end = self.parsed.line_offsets[statement.end_lineno or statement.lineno]
        return start, end

    def indent_of(self, statement: ast.stmt) -> str:
        """The whitespace a statement's first line starts with."""
        line = self.text[self.parsed.line_offsets[statement.lineno - 1] :].split("\n", 1)[0]
        return line[: len(line) - len(line.lstrip())]

    def fitted(self, node: ast.AST, text: str) -> str:
        """`text` to put in a node's place, in parentheses only where they change the parse (not as a call's
        argument or an assignment's value, nor where the node already sits in parentheses)."""
        bare = text[1:-1] if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]) else text
        try:
            plain = ast.dump(syntax.parse(self.replace(node, bare)))
            grouped = ast.dump(syntax.parse(self.replace(node, f"({bare})")))
        except (SyntaxError, ValueError, RecursionError):
            return f"({bare})"
        return bare if plain == grouped else f"({bare})"

    def replace_all(self, changes: list[tuple[ast.AST, str]]) -> str:
        """The source with several nodes' texts replaced at once (nodes that do not overlap)."""
        text = self.text
        for start, end, new in sorted(((*self.span(n), t) for n, t in changes), reverse=True):
            text = text[:start] + new + text[end:]
        return text

    def in_kernel(self, node: ast.AST) -> bool:
        line = getattr(node, "lineno", 0)
        return any(k.lineno <= line <= (k.end_lineno or k.lineno) for k in self.kernels)

    def kernel_nodes(self) -> Iterator[tuple[ast.FunctionDef, ast.AST]]:
        for kernel in self.kernels:
            for node in ast.walk(kernel):
                yield kernel, node

    def host_nodes(self) -> Iterator[ast.AST]:
        for node in ast.walk(self.tree):
            if hasattr(node, "lineno") and not self.in_kernel(node):
                yield node


def _balanced(text: str) -> bool:
    """Whether a text's parentheses pair up without closing below zero (`a) + (b` does not)."""
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _tensor_root(expr: ast.expr) -> str:
    """`x` for `x`, `x.contiguous()`, `x.view(-1)`; `self.weight` for `self.weight`; "" for anything else."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return ast.unparse(expr)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value
        else:
            return ""


_SIZE_MARKS = (".shape", "numel", "size(", "len(", "//", "cdiv", "next_power_of_2", ".stride(")


# Methods that make a tensor from a tensor: a value they return is data, not a size, whatever sizes it is made with.
_TENSOR_METHODS = frozenset(
    {"view", "reshape", "contiguous", "to", "float", "half", "double", "int", "long", "flatten", "transpose"}
    | {"permute", "expand", "clone", "new_empty", "new_zeros", "new_ones", "new_full", "t", "unsqueeze", "squeeze"}
)


def _makes_tensor(value: ast.expr) -> bool:
    """`torch.empty(n)`, `x.new_zeros(n)`, `x.view(m, n)`: an allocation or a view, not a size."""
    if not isinstance(value, ast.Call):
        return False
    name = call_name(value)
    if name.startswith("torch.") and not name.startswith(("torch.numel", "torch.Size")):
        return True
    return isinstance(value.func, ast.Attribute) and value.func.attr in _TENSOR_METHODS


def _is_size(arg: ast.expr, sizes: set[str]) -> bool:
    if _makes_tensor(arg):
        return False
    text = ast.unparse(arg)
    return any(mark in text for mark in _SIZE_MARKS) or bool(names_in(arg) & sizes)


def formula_constants(reference: str) -> list[float]:
    """The constants of the reference's formula (0 and 1 excluded): the float literals of its `Model` and of what
    builds it (`get_init_inputs` and the module's names it uses) in order of appearance, then the constants and
    float defaults of the PyTorch functions it calls (kope.bugs.formulas). The literals that only make inputs
    (`torch.randn(...) * 3.0`) are not the formula's."""
    try:
        tree = syntax.parse(reference)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[float] = []
    for part in _formula_parts(tree):
        for node in ast.walk(part):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, float)
                and node.value not in (0.0, 1.0, *found)
            ):
                found.append(node.value)
    for value in constants_of_calls(tree):
        if value not in (0.0, 1.0, *found):
            found.append(value)
    return found


def _formula_parts(tree: ast.Module) -> list[ast.AST]:
    """The `Model` class, `get_init_inputs` and the module-level assignments of the names those use; the whole
    module when it has no `Model`."""
    model = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"]
    if not model:
        return [tree]
    init = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_init_inputs"]
    used = set().union(*(names_in(n) for n in model + init))
    module = [
        n
        for n in tree.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id in used for t in n.targets)
    ]
    return [*model, *init, *module]


def site_arguments(site: LaunchSite) -> dict[str, ast.expr]:
    """One launch's arguments by the kernel parameter they are passed for (positional, then keyword; none of the
    positional ones where a starred argument makes them unknown)."""
    names = params_of(site.kernel)
    found = dict(zip(names, _unstarred(site.call, len(names)) or [], strict=False))
    found.update({k.arg: k.value for k in site.call.keywords if k.arg in names})
    return found


def _unstarred(call: ast.Call, params: int) -> list[ast.expr] | None:
    """A launch's positional arguments with each `*t.stride()` spread into `t.stride(0)`, `t.stride(1)`...: the
    parameters the named arguments leave, shared equally. None when another starred argument makes it unknown."""
    starred = [a for a in call.args if isinstance(a, ast.Starred)]
    if not starred:
        return list(call.args)
    if not all(isinstance(s.value, ast.Call) and ast.unparse(s.value).endswith(".stride()") for s in starred):
        return None
    named = {k.arg for k in call.keywords}
    left = params - (len(call.args) - len(starred)) - len(named)
    if left <= 0 or left % len(starred):
        return None
    each = left // len(starred)
    out: list[ast.expr] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            tensor = arg.value.func.value  # type: ignore[attr-defined]
            out += [ast.Call(ast.Attribute(tensor, "stride", ast.Load()), [ast.Constant(i)], []) for i in range(each)]
        else:
            out.append(arg)
    return out


# The per-kernel analyses below are asked for by every operator, often once per site; they are cached by the
# kernel's node (identity), a bounded number of kernels at a time. Their results are shared: do not mutate them.


@functools.lru_cache(maxsize=256)
def pointers_of(kernel: ast.FunctionDef) -> frozenset[str]:
    """Parameters that appear as a bare term of an address expression (the base of a load or store)."""
    params = set(params_of(kernel))
    return frozenset(
        t.id for expr in address_exprs(kernel) for t in _leading(expr) if isinstance(t, ast.Name) and t.id in params
    )


def _leading(expr: ast.expr) -> list[ast.expr]:
    """The terms of a sum, and of what a difference subtracts from (`dst + i - 1`: `dst`, `i`)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub):
        return _leading(expr.left)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _leading(expr.left) + _leading(expr.right)
    return [expr]


@functools.lru_cache(maxsize=256)
def assignments(kernel: ast.FunctionDef) -> dict[str, list[ast.Assign]]:
    """Single-name assignments by name, in source order."""
    found: dict[str, list[ast.Assign]] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.setdefault(node.targets[0].id, []).append(node)
    return found


def arange_names(kernel: ast.FunctionDef) -> set[str]:
    """Names a kernel binds to an expression holding `tl.arange` (the lanes of a block)."""
    return {n for n, a in assignments(kernel).items() if any("arange" in ast.unparse(x.value) for x in a)}


def autotune_configs(decorator: ast.Call, tree: ast.AST | None = None) -> ast.expr | None:
    """What an `@triton.autotune(...)` call gives as its configs: the `configs=` keyword, else its first argument.
    With the file's `tree`, a name is read through to the list or tuple it is last bound to above the decorator (at
    module level, or in the host function the kernel is defined in: `configs = [...]` then `configs=configs`)."""
    given = next((k.value for k in decorator.keywords if k.arg == "configs"), None)
    given = given if given is not None else (decorator.args[0] if decorator.args else None)
    if not (isinstance(given, ast.Name) and tree is not None):
        return given
    enclosing = [  # the host functions the decorator stands in, innermost last
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.lineno < decorator.lineno <= (node.end_lineno or 0)
    ]
    scopes = [sorted(enclosing, key=lambda f: f.lineno)[-1].body] if enclosing else []
    for body in [*scopes, getattr(tree, "body", [])]:  # its own function's binding first, then the module's
        values = [
            s.value
            for s in body
            if isinstance(s, ast.Assign)
            and s.lineno < decorator.lineno
            and any(isinstance(t, ast.Name) and t.id == given.id for t in s.targets)
        ]
        if values:
            return values[-1] if isinstance(values[-1], ast.List | ast.Tuple) else given
    return given


def config_tables(program: Program, kernel: ast.FunctionDef) -> list[ast.Dict | None]:
    """The meta-parameter dict of each config of a kernel's autotune (`triton.Config({...})`, through a name its
    configs are bound to), None for an entry written otherwise; empty where no autotune lists its configs."""
    tune = program.parsed.autotune(kernel)
    configs = autotune_configs(tune, program.parsed.tree) if tune is not None else None
    entries = configs.elts if isinstance(configs, ast.List | ast.Tuple) else []
    return [
        entry.args[0] if isinstance(entry, ast.Call) and entry.args and isinstance(entry.args[0], ast.Dict) else None
        for entry in entries
    ]


def slice_text(node: ast.Subscript) -> str:
    """A subscript's index as text without parentheses or spaces: `x[:, None]` -> `:,None`."""
    return ast.unparse(node.slice).strip("()").replace(" ", "")


def derived_names(
    kernel: ast.FunctionDef, names: set[str], seed: Callable[[ast.expr], bool] = lambda _: False
) -> set[str]:
    """`names` and the names the kernel assigns (transitively) from them, or from a value `seed` holds for."""
    assigned = assignments(kernel)
    found, changed = set(names), True
    while changed:
        grown = {n for n, values in assigned.items() if any(seed(v.value) or names_in(v.value) & found for v in values)}
        changed, found = not grown <= found, found | grown
    return found


def axis_names(kernel: ast.FunctionDef, axis: int) -> set[str]:
    """Names the kernel derives (through assignments) from `tl.program_id(axis)`."""

    def reads(value: ast.expr) -> bool:
        return any(
            isinstance(n, ast.Call)
            and call_name(n, last=True) == "program_id"
            and bool(n.args)
            and isinstance(n.args[0], ast.Constant)
            and n.args[0].value == axis
            for n in ast.walk(value)
        )

    return derived_names(kernel, set(), reads)


def program_id_names(kernel: ast.FunctionDef) -> set[str]:
    """Names derived from tl.program_id (rows, batches, heads), transitively; a value loaded from memory (a target
    class read at the row's address) is data, not a position, and does not count."""
    assigned = assignments(kernel)
    pids: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, assigns in assigned.items():
            if name in pids:
                continue
            for a in assigns:
                text = ast.unparse(a.value)
                if "program_id" in text or (names_in(a.value) & pids and "arange" not in text and "load(" not in text):
                    pids.add(name)
                    changed = True
                    break
    return pids


def memory_accesses(kernel: ast.FunctionDef) -> Iterator[ast.Call]:
    """The kernel's loads, stores and atomics."""
    for node in ast.walk(kernel):
        name = call_name(node)
        if (
            isinstance(node, ast.Call)
            and name.startswith("tl.")
            and name.split(".")[-1] in ("load", "store", "atomic_add", "atomic_max", "atomic_min")
            and node.args
        ):
            yield node


def feeding(kernel: ast.FunctionDef, pointer: ast.expr) -> list[ast.expr]:
    """An address and the values assigned to the names it uses (transitively, arithmetic only)."""
    assigned = assignments(kernel)
    seen: set[int] = set()
    found: list[ast.expr] = []
    stack: list[ast.expr] = [pointer]
    while stack:
        expr = stack.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        found.append(expr)
        for used in sorted(names_in(expr)):
            for a in assigned.get(used, []):
                if isinstance(a.value, ast.BinOp | ast.Name):
                    stack.append(a.value)
    return found


@functools.lru_cache(maxsize=256)
def address_exprs(kernel: ast.FunctionDef) -> tuple[ast.expr, ...]:
    """The address expressions of the kernel's loads and stores, and the values assigned to names used as such."""
    seen: set[int] = set()
    found: list[ast.expr] = []
    for access in memory_accesses(kernel):
        for expr in feeding(kernel, access.args[0]):
            if id(expr) not in seen:
                seen.add(id(expr))
                found.append(expr)
    return tuple(found)


def swapped(program: Program, a: ast.AST, b: ast.AST) -> tuple[ast.AST, str, str, str]:
    """The source with the texts of two nodes exchanged: (the earlier node, the new source, its text, the other's)."""
    first, second = sorted((a, b), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    s1, e1 = program.span(first)
    s2, e2 = program.span(second)
    text = program.text
    return first, text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:], text[s1:e1], text[s2:e2]


REDUCTIONS = ("tl.sum", "tl.max", "tl.min", "tl.argmax", "tl.argmin", "tl.reduce")
"""Reductions along an `axis`: a 2-D block reduced along one axis runs along the other."""

STORING = ("tl.store", "tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_xchg")
"""The calls that write a value to memory (the value is their second argument)."""


def reached(kernel: ast.FunctionDef, expr: ast.expr, targets: set[str], *, through_loads: bool) -> set[str]:
    """The `targets` an expression uses, directly or through the names assigned before it (transitively),
    stopping at the first target on each path; `through_loads=False` does not follow a loaded value."""
    assigned = assignments(kernel)
    found: set[str] = set()
    seen: set[str] = set()
    stack = sorted(names_in(expr))
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in targets:
            found.add(name)
            continue
        for a in assigned.get(name, []):
            if through_loads or "load(" not in ast.unparse(a.value):
                stack += sorted(names_in(a.value))
    return found


def stored_results(program: Program) -> Iterator[tuple[ast.FunctionDef, ast.stmt | ast.expr, ast.expr]]:
    """(kernel, node, value) for every value a kernel stores (`tl.store(p, v)`, without a final `.to(...)`) and
    every value a `@triton.jit` helper returns (its caller stores it)."""
    for kernel in program.kernels:
        for node in ast.walk(kernel):
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
            elif isinstance(node, ast.Call) and call_name(node) in STORING and len(node.args) >= 2:
                value = node.args[1]
            else:
                continue
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
                value = value.func.value
            yield kernel, node, value


def value_flow(program: Program, depth: int = 2) -> Iterator[tuple[ast.FunctionDef, ast.expr]]:
    """The values kernels store, then the right-hand sides of the assignments that reach the names they use, up to
    `depth` assignments back (`soft` in `y = tl.where(c, x, soft)`; `tl.store(p, y)`): for a name used in an
    assignment, the last assignment to it before that one (`loss = f(x)`, then `loss = tl.where(m, loss, 0.0)`
    reaches `f(x)`). A `@triton.jit` helper's returned value counts as stored. Only values are followed: not the
    addresses and masks of loads, not a `tl.where`'s condition, not comparisons, not positions (`tl.arange`,
    `tl.program_id`)."""
    for kernel, node, value in stored_results(program):
        assigned = _definitions(kernel)
        yield kernel, value
        frontier: list[tuple[ast.expr, int, int]] = [(value, node.lineno, depth)]
        seen = {id(value)}
        while frontier:
            following = []
            for expr, line, left in frontier:
                for name in value_names(expr):
                    earlier = [a for a in assigned.get(name, []) if a.lineno < line]
                    if not earlier or id(earlier[-1].value) in seen:
                        continue
                    reaching = earlier[-1].value
                    seen.add(id(reaching))
                    if boolean(reaching) or _position(reaching):
                        continue
                    renamed = isinstance(reaching, ast.Name)  # `acc += term`, `y = x`: passes the value on, no step
                    rest = left if renamed else left - 1
                    if rest < 0:
                        continue
                    yield kernel, reaching
                    if rest > 0 or renamed:
                        following.append((reaching, earlier[-1].lineno, rest))
            frontier = following


@functools.lru_cache(maxsize=256)
def _definitions(kernel: ast.FunctionDef) -> dict[str, list[ast.Assign | ast.AugAssign]]:
    """Assignments and augmented assignments (`acc += term`) to single names, by name, in source order."""
    found: dict[str, list[ast.Assign | ast.AugAssign]] = {name: list(a) for name, a in assignments(kernel).items()}
    for node in ast.walk(kernel):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.setdefault(node.target.id, []).append(node)
    return {name: sorted(nodes, key=lambda n: (n.lineno, n.col_offset)) for name, nodes in found.items()}


def value_nodes(expr: ast.expr) -> Iterator[ast.expr]:
    """The expressions a value computes with, outermost first: not inside its loads' and stores' arguments
    (addresses, masks), a `tl.where`'s condition, or a comparison."""
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.expr):
            if boolean(node):
                continue
            yield node
            if isinstance(node, ast.Call) and call_name(node) in ("tl.load", "tl.store"):
                continue
            if isinstance(node, ast.Call) and call_name(node) == "tl.where" and node.args:
                stack += reversed(node.args[1:])
                continue
        stack += reversed(list(ast.iter_child_nodes(node)))


def value_names(expr: ast.expr) -> list[str]:
    """The names an expression computes with (`value_nodes`), sorted."""
    return sorted({n.id for n in value_nodes(expr) if isinstance(n, ast.Name)})


def _position(expr: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and call_name(n) in ("tl.arange", "tl.program_id") for n in ast.walk(expr))


def boolean(expr: ast.expr) -> bool:
    """A comparison or a combination of them: a mask, which no factor belongs on."""
    if isinstance(expr, ast.Compare | ast.BoolOp):
        return True
    return (
        isinstance(expr, ast.BinOp)
        and isinstance(expr.op, ast.BitAnd | ast.BitOr)
        and (boolean(expr.left) or boolean(expr.right))
    )


def terms_of(expr: ast.expr) -> list[ast.expr]:
    """The additive terms of `a + b + c` (a single term otherwise)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return terms_of(expr.left) + terms_of(expr.right)
    return [expr]


# -- the operators -----------------------------------------------------------------------------

Operator = Callable[[Program], Iterator[Edit]]
OPERATORS: dict[str, tuple[BugId, Operator]] = {}
"""name -> (taxonomy id, operator)"""


def operator(name: str, label: BugId) -> Callable[[Operator], Operator]:
    def register(fn: Operator) -> Operator:
        held = OPERATORS.get(name)
        if held is not None and held[1].__module__ != fn.__module__:  # two kinds, one name: one would go unheard
            raise ValueError(f"repair operator {name!r} is already {held[1].__module__}.{held[1].__qualname__}")
        OPERATORS[name] = (label, fn)
        return fn

    return register


def edits(program: Program, names: list[str] | None = None) -> list[Edit]:
    """Every distinct edit of the operators (`names`, default all), in operator then source order. Of two operators
    that make one source, the first keeps it, unless only the later one cued it (`dead-stride`'s `offs * s_c` for
    `stride-name`'s) or grounded its cue: then the later edit takes its place."""
    found: list[Edit] = []
    where: dict[str, int] = {program.text: -1}
    for name in names or list(OPERATORS):
        try:
            made = list(OPERATORS[name][1](program))
        except RecursionError:  # nested deeper than the analysis recurses (hostile or generated): no edit of it
            continue
        for edit in made:
            if edit.source in where:
                at = where[edit.source]
                if at >= 0 and ((edit.cue and not found[at].cue) or (edit.grounded and not found[at].grounded)):
                    found[at] = edit
                continue
            if not parses(program.text, edit.source):
                continue
            where[edit.source] = len(found)
            found.append(edit)
            twin = _in_every_copy(program, edit)
            if twin is not None and twin.source not in where:
                where[twin.source] = len(found)
                found.append(twin)
    return found


def _in_every_copy(program: Program, edit: Edit) -> Edit | None:
    """An edit of one line that other kernels repeat word for word (a model that wrote one matrix product and
    copied it, bug and all, for another), made on every copy: each copy's fix alone leaves the output wrong. None
    when the edit changes more than one line, the line is not a whole statement before and after (each copy is then
    the same statement replaced, which parses), or no other kernel has that line."""
    change = changed_lines(program.text, edit.source)
    if "\n" in change.before or "\n" in change.after or not change.before.strip():
        return None
    try:
        ast.parse(change.before)
        ast.parse(change.after)
    except (SyntaxError, ValueError, RecursionError):
        return None
    lines = program.text.splitlines(keepends=True)
    spans = [(k.lineno, k.end_lineno or k.lineno) for k in program.kernels]
    at = [i for i, line in enumerate(lines) if line.strip() == change.before.strip()]
    kernels = {next((n for n, (a, b) in enumerate(spans) if a <= i + 1 <= b), -1) for i in at}
    kernels.discard(-1)
    if len(kernels) < 2:
        return None
    for i in at:
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        ending = lines[i][len(lines[i].rstrip("\r\n")) :]
        lines[i] = indent + change.after.strip() + ending
    return Edit(
        edit.operator,
        edit.label,
        edit.line,
        f"{edit.description} (and on each of the {len(at)} copies of the line, in {len(kernels)} kernels)",
        "".join(lines),
        edit.cue,
        edit.grounded,
    )


@dataclass(frozen=True)
class Change:
    """The lines an edit changed: how many lines before and after it are unchanged, and the old and new text of the
    lines between, dedented."""

    head: int
    tail: int
    before: str
    after: str
    indent: tuple[str, str]
    """The common indentation of the old and the new lines."""


def changed_lines(base: str, edited: str) -> Change:
    old, new = base.splitlines(), edited.splitlines()
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    before, after = old[head : len(old) - tail], new[head : len(new) - tail]
    return Change(
        head,
        tail,
        textwrap.dedent("\n".join(before)),
        textwrap.dedent("\n".join(after)),
        (_indent(before), _indent(after)),
    )


def _indent(lines: list[str]) -> str:
    found = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    return min(found, key=len) if found else ""


def parses(base: str, edited: str) -> bool:
    """Whether an edit of a source that parses still parses: checked on the changed lines alone where they were
    whole statements at the same indentation before and after (a splice inside them cannot break the rest), else
    on the whole source."""
    change = changed_lines(base, edited)
    try:
        if change.indent[0] == change.indent[1]:
            ast.parse(change.before)
            ast.parse(change.after)
            return True
    except (SyntaxError, ValueError, RecursionError):
        pass
    try:
        syntax.parse(edited)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def edit_at(program: Program, name: str, node: ast.AST, text: str, description: str) -> Edit:
    return Edit(name, OPERATORS[name][0], getattr(node, "lineno", 0), description, program.replace(node, text))


def launches_of(program: Program) -> Iterator[ast.Call]:
    for node in program.host_nodes():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            yield node


ORDER = (
    "api-together",
    "missing-import",
    "task-global",
    "constexpr-param",
    "constexpr-local",
    "autotune-keyword",
    "arange-block",
    "missing-function",
    "keyword-spelling",
    "hint-keyword",
    "dtype-call",
    "grid-tuple",
    "helper-jit",
    "nested-jit",
    "skip-continue",
    "block-index",
    "block-slice",
    "flatten-ravel",
    "scalar-tensor",
    "autotune-wrapper",
    "config-dict",
    "carried-type",
    "data-ptr",
    "store-lane",
    "axis-required",
    "host-cast",
    "unset-block",
    "grid-arity",
    "grid-axes",
    "host-jit-call",
    "register-clash",
    "arange-loop",
    "unknown-keyword",
    "hint-call",
    "null-pointer",
    "compare-flip",
    "floor-to-cdiv",
    "block-count",
    "loop-bound",
    "loop-step",
    "stride-argument",
    "transposed-operands",
    "reshape-axes",
    "dot-transpose",
    "stride-name",
    "stride-swap",
    "grid-axis",
    "early-return",
    "stride-factor",
    "offset-term",
    "index-decode",
    "remainder-coordinate",
    "address-coordinate",
    "index-shift",
    "other-identity",
    "reduction-init",
    "accumulator-move",
    "normalize-after",
    "scan-kind",
    "constant",
    "missing-factor",
    "drop-operation",
    "add-mask",
    "max-subtraction",
    "broadcast-swap",
    "compare-operand",
    "grid-swap",
    "pid-swap",
    "floor-mod",
    "sibling-offset",
    "loop-offset",
    "advance-stride",
    "advance-axis",
    "divisor",
    "upcast",
    "reduction-swap",
    "index-scalar",
    "block-scale",
    "vector-lanes",
    "mask-clause",
    "accumulate",
    "nested-factor",
    "host-dtype",
    "sign",
    "branch-swap",
    "reduce-axis",
    "xlogy",
    "dead-value",
    "dead-position",
    "dead-mask",
    "dead-stride",
    "zero-init",
    "true-division",
    "into-call",
    "abs-argument",
    "clamp-exponent",
    "padding-where",
    "index-divide",
    "named-index",
    "atomic-store",
    "alloc-dtype",
    "argument-swap",
    "running-init",
    "drop-downcast",
    "log-base",
    "shared-term",
    "index-factor",
    "log-one-plus",
    "host-size",
    "shape-unpack",
    "size-swap",
    "grid-product",
    "group-cap",
    "autotune-grid",
    "tile-grid",
    "tile-mask",
    "complement",
    "name-swap",
    "drop-term",
    "int-literal",
    "if-branch",
    "formula-store",
    "formula-swap",
    "self-operand",
    "cross-program-atomic",
    "norm-sqrt",
    "drop-cap",
    "whole-block",
    "pool-floor",
    "loop-tail",
    "block-tail",
    "layer-bias",
    "scale-scope",
    "epilogue-order",
    "flat-tap",
    "layer-bias-flag",
    "param-shape",
    "param-transpose",
    "eval-statistics",
    "missing-advance",
    "pointer-drift",
    "guarded-atomic",
    "axis-once",
    "own-output",
    "dead-pointer",
    "capped-block",
    "axis-swap",
    "compare-reverse",
    "plain-order",
    "autotune-restore",
)
"""The registry's order; an operator missing here comes after these."""


def in_order(registry: dict[str, Any]) -> None:
    """Put `registry` in `ORDER` (kinds register in import order); names missing there come after, in theirs."""
    ordered = {**{name: registry[name] for name in ORDER if name in registry}, **registry}
    registry.clear()
    registry.update(ordered)
