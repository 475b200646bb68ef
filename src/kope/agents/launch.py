"""Launch parameters of a Triton kernel file: found on the parsed candidate (kope.source), rewritten
by splicing the literals' text, so everything else stays byte for byte.

A *knob* is a value that changes how a kernel is launched but not what it computes (if the kernel
is written for any size — the evaluator checks that). Block sizes are written in several styles,
each a knob kind:

    const:NAME     a module constant (`BLOCK = 1024`, `BM, BN = 64, 64`): uppercase powers of two
                   >= 16, and any power of two that a launch passes to a `tl.constexpr` parameter
    cap:NAME       the power-of-two literal in `NAME = min(<literal>, ...)`, NAME passed to a launch
    var:NAME       a local variable of the launching function (`BLOCK = 256`, `BM, BN, BK = 32, 32, 32`)
                   passed to a `tl.constexpr` parameter, every assignment of it a power-of-two literal
    kw:NAME        a literal at the launch: a keyword (`BLOCK=1024`, GROUP_M) or a positional argument
                   of a `tl.constexpr` parameter (NAME is then the parameter)
    kw:num_warps   the launch's num_warps (added when absent)
    kw:num_stages  the launch's num_stages (added when absent)

A `META` grid (`grid = lambda META: (triton.cdiv(n, META["BLOCK"]),)`) reads the launch's own
meta-parameters, so the knob is whichever of the styles above gives BLOCK its value.

Kernels under `@triton.autotune` are left to the autotuner: its configs own their block sizes,
num_warps and num_stages (a launch that passed them would conflict with the configs), and on a
GPU it already times every config for each new key. The search does not rewrite the configs;
`scan` reports which names autotune (or `@triton.heuristics`) owns, so that a search that finds
nothing says why.

Knob ids carry no kernel name, so a configuration found for one kernel maps onto another that
uses the same names (relu's and gelu's BLOCK). Every launch in the file gets the same value for a
`kw:` knob.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from kope.source import LaunchSite, ParsedSource, call_name, dotted

WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)
DEFAULTS = {"kw:num_warps": 4, "kw:num_stages": 3}
LAUNCH_OPTIONS = ("num_warps", "num_stages")


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


@dataclass
class LaunchScan:
    """The knobs of a file, where each is written, and what the search leaves alone."""

    knobs: list[Knob] = field(default_factory=list)
    sites: dict[str, list[ast.expr]] = field(default_factory=dict)
    """Knob id -> the expressions that hold its value (replaced by the configuration's literal)."""
    missing: dict[str, list[ast.Call]] = field(default_factory=dict)
    """kw:num_warps / kw:num_stages -> the launches that do not pass it (the keyword is added there)."""
    notes: list[str] = field(default_factory=list)
    """Why some launch parameters are not knobs (autotune's or heuristics' own)."""


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _powers(value: int, down: int, up: int, low: int, high: int) -> tuple[int, ...]:
    found = []
    candidate = max(low, value >> down)
    while candidate <= min(high, value << up):
        found.append(candidate)
        candidate <<= 1
    return tuple(found)


def _int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _assignments(body: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of every `name = value` and `a, b = x, y` under `body` (tuple values paired up;
    a tuple target from anything else gives each name the whole value). A chained `a = b = v` gives
    each name `v` as a computed value, so that one literal is never two knobs."""
    for node in ast.walk(body):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            augmented = isinstance(node, ast.AugAssign) or len(targets) > 1
            for target in targets:
                yield from _pairs(target, node.value, augmented)


def _pairs(target: ast.expr, value: ast.expr, augmented: bool) -> Iterator[tuple[str, ast.expr]]:
    if isinstance(target, ast.Name):
        yield target.id, (ast.BinOp(ast.Name(target.id), ast.Add(), value) if augmented else value)
    elif isinstance(target, ast.Tuple | ast.List):
        paired = isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts)
        for index, element in enumerate(target.elts):
            yield from _pairs(element, value.elts[index] if paired else value, augmented)  # type: ignore[attr-defined]


def _module_assignments(tree: ast.Module) -> dict[str, list[ast.expr]]:
    found: dict[str, list[ast.expr]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            for name, value in _assignments(statement):
                found.setdefault(name, []).append(value)
    return found


def _min_cap(node: ast.expr) -> ast.Constant | None:
    if isinstance(node, ast.Call) and call_name(node) == "min":
        for arg in node.args:
            value = _int(arg)
            if value is not None and _power_of_two(value) and value >= 16:
                assert isinstance(arg, ast.Constant)
                return arg
    return None


def _constexprs(kernel: ast.FunctionDef) -> set[str]:
    return {
        a.arg
        for a in kernel.args.args + kernel.args.kwonlyargs
        if a.annotation is not None and dotted(a.annotation).endswith("constexpr")
    }


def _arguments(site: LaunchSite) -> Iterator[tuple[str | None, ast.expr, bool]]:
    """(parameter, value, is keyword) for each argument of a launch; None when it cannot be told."""
    params = [a.arg for a in site.kernel.args.args]
    for index, arg in enumerate(site.call.args):
        if isinstance(arg, ast.Starred) or any(isinstance(a, ast.Starred) for a in site.call.args[:index]):
            continue
        yield (params[index] if index < len(params) else None), arg, False
    for keyword in site.call.keywords:
        if keyword.arg is not None:
            yield keyword.arg, keyword.value, True


def _owned(parsed: ParsedSource, kernel: ast.FunctionDef) -> tuple[list[str], str] | None:
    """The names `@triton.autotune` or `@triton.heuristics` set for a kernel, and which owns them."""
    autotune = parsed.autotune(kernel)
    if autotune is not None:
        first = autotune.args[0] if autotune.args else None
        configs = next((k.value for k in autotune.keywords if k.arg == "configs"), first)
        names: list[str] = []
        count = len(configs.elts) if isinstance(configs, ast.List | ast.Tuple) else None
        for config in configs.elts if isinstance(configs, ast.List | ast.Tuple) else []:
            meta = config.args[0] if isinstance(config, ast.Call) and config.args else None
            keys = [k.value for k in meta.keys if isinstance(k, ast.Constant)] if isinstance(meta, ast.Dict) else []
            extra = [k.arg for k in config.keywords if k.arg in LAUNCH_OPTIONS] if isinstance(config, ast.Call) else []
            names += [str(n) for n in [*keys, *extra] if str(n) not in names]
        size = f"its {count} configs" if count is not None else "its configs"
        return names or list(LAUNCH_OPTIONS), f"@triton.autotune over {size}"
    heuristics = parsed.heuristics(kernel)
    table = heuristics.args[0] if heuristics is not None and heuristics.args else None
    if isinstance(table, ast.Dict):
        return [str(k.value) for k in table.keys if isinstance(k, ast.Constant)], "@triton.heuristics"
    return None


class _Scanner:
    """One pass over a parsed file's launches, collecting the knobs of every style."""

    def __init__(self, parsed: ParsedSource) -> None:
        self.parsed = parsed
        self.scan = LaunchScan()
        self.module = _module_assignments(parsed.tree)
        self.unpacked = {
            name
            for statement in parsed.tree.body
            if isinstance(statement, ast.Assign)
            and not (len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name))
            for name, _ in _assignments(statement)
        }
        """Module names assigned by unpacking (`A, B = 16, 17`): block sizes only when a launch passes them."""
        self.found: dict[str, list[tuple[int, ast.expr, tuple[int, ...]]]] = {}
        """Knob id -> (value, where it is written, choices) for every place seen."""
        self.options: dict[str, set[int | None]] = {}

    def run(self) -> LaunchScan:
        tuned = [site for site in self.parsed.launches if not self._autotuned(site)]
        indirect = self._indirect()
        if not self.parsed.launches and not indirect:
            return self.scan
        self._module_constants(None)
        for site in tuned:
            constexprs = _constexprs(site.kernel)
            for param, value, is_keyword in _arguments(site):
                if param is not None:
                    self._argument(site, param, value, is_keyword, param in constexprs)
        for call in indirect:  # the kernel is not known: its keywords are all one can read
            for keyword in call.keywords:
                if keyword.arg is not None:
                    self._argument(None, keyword.arg, keyword.value, True, False)
        self._collect()
        for call in [site.call for site in tuned] + indirect:
            present = {k.arg for k in call.keywords}
            for option in LAUNCH_OPTIONS:
                if option not in present and (call.args or call.keywords):
                    self.scan.missing.setdefault(f"kw:{option}", []).append(call)
        for key, choices in (("kw:num_warps", WARPS), ("kw:num_stages", STAGES)):
            if key in self.options or key in self.scan.missing:
                values = self.options.get(key, {None})
                self.scan.knobs.append(Knob(key, next(iter(values)) if len(values) == 1 else None, choices))
        return self.scan

    def _collect(self) -> None:
        """The places seen become knobs, block sizes first; a name seen with two values is none."""
        for kind in ("const", "cap", "var", "kw"):
            for key, places in self.found.items():
                if key.startswith(kind + ":") and len({value for value, _, _ in places}) == 1:
                    self.scan.knobs.append(Knob(key, places[0][0], places[0][2]))
                    self.scan.sites[key] = _unique([node for _, node, _ in places])

    def _indirect(self) -> list[ast.Call]:
        """Calls shaped like launches of a kernel the file does not name (`self.kernel[grid](...)`,
        a kernel passed in as an argument)."""
        known = {id(site.call) for site in self.parsed.launches}
        inside = {id(node) for node in self.parsed.kernel_nodes()}
        return [
            node
            for node in ast.walk(self.parsed.tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Subscript)
            and isinstance(node.func.value, ast.Name | ast.Attribute)
            and id(node) not in known
            and id(node) not in inside
        ]

    def _autotuned(self, site: LaunchSite) -> bool:
        through = site.call.func.value if isinstance(site.call.func, ast.Subscript) else None
        if isinstance(through, ast.Name) and through.id in self.parsed.kernel_aliases:  # tuned = autotune(...)(k)
            note = f"{site.kernel.name}: launched through `{through.id}`, which wraps it; the launch search leaves it"
            if note not in self.scan.notes:
                self.scan.notes.append(note)
            return True
        owned = _owned(self.parsed, site.kernel)
        if owned is None:
            return False
        names, owner = owned
        note = f"{site.kernel.name}: {', '.join(names)} chosen by {owner}; the launch search leaves them to it"
        if note not in self.scan.notes:
            self.scan.notes.append(note)
        return owner.startswith("@triton.autotune")

    def _add(self, key: str, node: ast.expr, low: int, down: int, up: int) -> None:
        value = _int(node)
        assert value is not None
        self.found.setdefault(key, []).append((value, node, _powers(value, down, up, low, 16384 if low > 1 else 1024)))

    def _module_constants(self, flowing: str | None) -> None:
        for name, values in self.module.items():
            if (flowing is not None and name != flowing) or f"const:{name}" in self.found:
                continue
            literals = [_int(v) for v in values]
            if not all(v is not None and _power_of_two(v) for v in literals):
                continue
            first = literals[0] or 0
            if flowing is not None or (name.isupper() and first >= 16 and name not in self.unpacked):
                for node in values:
                    self._add(f"const:{name}", node, 16 if first >= 16 else 1, 3, 3)

    def _argument(
        self, site: LaunchSite | None, param: str, value: ast.expr, is_keyword: bool, constexpr: bool
    ) -> None:
        literal = _int(value)
        if param in LAUNCH_OPTIONS and is_keyword:
            self.options.setdefault(f"kw:{param}", set()).add(literal)
            self.scan.sites.setdefault(f"kw:{param}", []).append(value)
        elif literal is not None and _power_of_two(literal) and (is_keyword or constexpr):
            self._add(f"kw:{param}", value, 1, 2, 2)
        elif isinstance(value, ast.Name) and (is_keyword or constexpr):
            self._name(site, value.id, constexpr)

    def _name(self, site: LaunchSite | None, name: str, constexpr: bool) -> None:
        host = site.host if site is not None else None
        local = [v for n, v in _assignments(host) if n == name] if host is not None else []
        cap = _min_cap(local[0]) if len(local) == 1 else None
        if cap is not None:
            self._add(f"cap:{name}", cap, 16, 2, 2)
        elif local and constexpr and all(_power_of_two(_int(v) or 0) for v in local):
            if not any(node is v for v in local for _, node, _ in self.found.get(f"var:{name}", [])):
                for literal in local:
                    self._add(f"var:{name}", literal, 16 if (_int(local[0]) or 0) >= 16 else 1, 2, 2)
        elif not local and constexpr and name in self.module:
            self._module_constants(name)


def _unique(nodes: list[ast.expr]) -> list[ast.expr]:
    kept: list[ast.expr] = []
    for node in nodes:
        if all(node is not k for k in kept):
            kept.append(node)
    return kept


def scan(source: str) -> LaunchScan:
    """The launch parameters of a kernel file and where they are written (empty when it does not parse)."""
    parsed = ParsedSource.parse(source)
    return _Scanner(parsed).run() if parsed is not None else LaunchScan()


def find_knobs(source: str) -> list[Knob]:
    """The launch parameters of a kernel file, in a stable order (block sizes first)."""
    return scan(source).knobs


def current_config(knobs: list[Knob]) -> dict[str, int]:
    return {knob.id: knob.current for knob in knobs}


def apply_config(source: str, config: Mapping[str, int]) -> str:
    """The source with the knobs of `config` set (knobs the file does not have are ignored)."""
    parsed = ParsedSource.parse(source)
    if parsed is None:
        return source
    found = _Scanner(parsed).run()
    knobs = {knob.id: knob for knob in found.knobs}
    wanted = {key: value for key, value in config.items() if key in knobs}
    edits: list[tuple[int, int, int, str]] = []
    for key, value in wanted.items():
        for node in found.sites.get(key, []):
            start, end = parsed.span(node)
            edits.append((start, end, len(edits), str(value)))
        if key in DEFAULTS and value != knobs[key].current:
            for call in found.missing.get(key, []):
                position = _after_arguments(parsed, call)
                edits.append((position, position, len(edits), f", {key[3:]}={value}"))
    text = source
    for start, end, _, replacement in sorted(edits, key=lambda e: (e[0], e[2]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _after_arguments(parsed: ParsedSource, call: ast.Call) -> int:
    """Where a keyword is appended to a launch: after its last argument (a launch always has one)."""
    return max(parsed.span(a)[1] for a in [*call.args, *call.keywords])


def describe(changes: Mapping[str, tuple[int, int]]) -> str:
    return ", ".join(f"{key.split(':', 1)[1]} {old}→{new}" for key, (old, new) in sorted(changes.items()))
