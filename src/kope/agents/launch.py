"""Launch parameters of a Triton kernel file, found and rewritten with libcst.

A *knob* is a value that changes how a kernel is launched but not what it computes (if the kernel
is written for any size — the evaluator checks that):

    const:NAME     a module-level power-of-two constant (BLOCK = 1024, MAX_BLOCK = 4096)
    cap:NAME       the power-of-two literal in `NAME = min(<literal>, ...)`, NAME passed to a launch
    kw:NAME        a keyword of a launch `kernel[grid](..., NAME=<literal>)` (a tl.constexpr or GROUP_M)
    kw:num_warps   the launch's num_warps (added when absent)
    kw:num_stages  the launch's num_stages (added when absent)

Knob ids carry no kernel name, so a configuration found for one kernel maps onto another that
uses the same names (relu's and gelu's BLOCK). Every launch in the file gets the same value for a
`kw:` knob.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst

WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)
DEFAULTS = {"kw:num_warps": 4, "kw:num_stages": 3}


@dataclass(frozen=True)
class Knob:
    id: str
    value: int | None
    """The value in the source; None when it is computed there (or absent: the launch default)."""
    choices: tuple[int, ...]

    @property
    def current(self) -> int:
        return self.value if self.value is not None else DEFAULTS.get(self.id, self.choices[len(self.choices) // 2])

    def neighbours(self, value: int) -> list[int]:
        """The next smaller and next larger choices around `value`, larger first."""
        larger = [c for c in self.choices if c > value]
        smaller = [c for c in self.choices if c < value]
        return ([larger[0]] if larger else []) + ([smaller[-1]] if smaller else [])


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _powers(value: int, down: int, up: int, low: int, high: int) -> tuple[int, ...]:
    found = []
    candidate = max(low, value >> down)
    while candidate <= min(high, value << up):
        found.append(candidate)
        candidate <<= 1
    return tuple(found)


def _int(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value, 0)
        except ValueError:
            return None
    return None


def _launch_name(call: cst.Call) -> str | None:
    """`kernel` for a call `kernel[grid](...)`."""
    func = call.func
    if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name | cst.Attribute):
        return cst.Module([]).code_for_node(func.value)
    return None


@dataclass
class _Scan(cst.CSTVisitor):
    constants: dict[str, int] = field(default_factory=dict)
    keywords: dict[str, set[int | None]] = field(default_factory=dict)
    caps: dict[str, int] = field(default_factory=dict)
    launches: int = 0
    launch_names: set[str] = field(default_factory=set)
    depth: int = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        name = node.targets[0].target.value
        value = _int(node.value)
        if self.depth == 0 and value is not None and name.isupper() and _power_of_two(value) and value >= 16:
            self.constants[name] = value
        cap = _min_cap(node.value)
        if self.depth > 0 and cap is not None:
            self.caps[name] = cap

    def visit_Call(self, node: cst.Call) -> None:
        if _launch_name(node) is None:
            return
        self.launches += 1
        for arg in node.args:
            if arg.keyword is None:
                continue
            name = arg.keyword.value
            literal = _int(arg.value)
            if name in ("num_warps", "num_stages") or (literal is not None and _power_of_two(literal)):
                self.keywords.setdefault(name, set()).add(literal)
            if isinstance(arg.value, cst.Name):
                self.launch_names.add(arg.value.value)


def _min_cap(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "min":
        for arg in node.args:
            value = _int(arg.value)
            if value is not None and _power_of_two(value) and value >= 16:
                return value
    return None


def find_knobs(source: str) -> list[Knob]:
    """The launch parameters of a kernel file, in a stable order (block sizes first)."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return []
    scan = _Scan()
    module.visit(scan)
    if not scan.launches:
        return []
    knobs: list[Knob] = []
    for name, value in scan.constants.items():
        knobs.append(Knob(f"const:{name}", value, _powers(value, 3, 3, 16, 16384)))
    for name, value in scan.caps.items():
        if name in scan.launch_names and name not in ("num_warps", "num_stages"):
            knobs.append(Knob(f"cap:{name}", value, _powers(value, 2, 2, 16, 16384)))
    for name, values in scan.keywords.items():
        if name in ("num_warps", "num_stages"):
            continue
        literal = next(iter(values)) if len(values) == 1 else None
        if literal is not None:
            knobs.append(Knob(f"kw:{name}", literal, _powers(literal, 2, 2, 1, 1024)))
    for name, choices in (("num_warps", WARPS), ("num_stages", STAGES)):
        values = scan.keywords.get(name, {None})
        literal = next(iter(values)) if len(values) == 1 else None
        knobs.append(Knob(f"kw:{name}", literal, choices))
    return knobs


def current_config(knobs: list[Knob]) -> dict[str, int]:
    return {knob.id: knob.current for knob in knobs}


class _Rewrite(cst.CSTTransformer):
    def __init__(self, config: Mapping[str, int], knobs: Mapping[str, Knob]) -> None:
        self.config = config
        self.knobs = knobs
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if len(updated_node.targets) != 1 or not isinstance(updated_node.targets[0].target, cst.Name):
            return updated_node
        name = updated_node.targets[0].target.value
        if self.depth == 0 and f"const:{name}" in self.config and _int(updated_node.value) is not None:
            return updated_node.with_changes(value=cst.Integer(str(self.config[f"const:{name}"])))
        key = f"cap:{name}"
        if self.depth > 0 and key in self.config and isinstance(updated_node.value, cst.Call):
            call = updated_node.value
            args = list(call.args)
            for index, arg in enumerate(args):
                value = _int(arg.value)
                if value is not None and _power_of_two(value) and value >= 16:
                    args[index] = arg.with_changes(value=cst.Integer(str(self.config[key])))
                    break
            return updated_node.with_changes(value=call.with_changes(args=args))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if _launch_name(updated_node) is None:
            return updated_node
        args = list(updated_node.args)
        present = set()
        for index, arg in enumerate(args):
            if arg.keyword is None:
                continue
            key = f"kw:{arg.keyword.value}"
            present.add(key)
            if key in self.config and (key in DEFAULTS or _int(arg.value) is not None):
                args[index] = arg.with_changes(value=cst.Integer(str(self.config[key])))
        for key in DEFAULTS:
            knob = self.knobs.get(key)
            if key in self.config and key not in present and knob is not None and self.config[key] != knob.current:
                if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
                    args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                args.append(cst.Arg(keyword=cst.Name(key[3:]), value=cst.Integer(str(self.config[key])),
                                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        return updated_node.with_changes(args=args)


def apply_config(source: str, config: Mapping[str, int]) -> str:
    """The source with the knobs of `config` set (knobs the file does not have are ignored)."""
    knobs = {knob.id: knob for knob in find_knobs(source)}
    wanted = {key: value for key, value in config.items() if key in knobs}
    if not wanted:
        return source
    module = cst.parse_module(source)
    return module.visit(_Rewrite(wanted, knobs)).code


def describe(changes: Mapping[str, tuple[int, int]]) -> str:
    return ", ".join(f"{key.split(':', 1)[1]} {old}→{new}" for key, (old, new) in sorted(changes.items()))
