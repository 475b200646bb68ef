"""The reference's elementwise formulas: which PyTorch activations its `forward` calls, with their arguments.

A task's `Model.forward` calls activations as functions (`torch.sigmoid(x)`, `F.elu(x, alpha=0.5)`,
`x.relu()`) or as modules built in `__init__` (`self.act = nn.Softplus(beta=2)`, then `self.act(x)`). kope
reads both from the source (no execution) and resolves each argument to a number: a literal, a default
of PyTorch's, or a name bound to one (an `__init__` parameter given by `get_init_inputs()`, a module-level
constant). `FORMULAS` is the verified table of their elementwise formulas, written in Triton's terms in
numerically stable forms (tests/repair/test_reference.py checks each against PyTorch on the CPU): the
formula repair operator (kope.bugs.formula) offers them where a kernel's formula is wrong.

    calls = activations(task.source)          # [Activation(name="hardtanh", params={...}), ...]
    FORMULAS["gelu"].triton("x", calls[0].params)   # "0.5 * x * (1.0 + tl.erf(x * 0.7071...))"
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from kope import syntax
from kope.cases.task import binding_counts, module_bindings

Params = Mapping[str, float]


def _sigmoid(x: str) -> str:
    return f"(1.0 / (1.0 + tl.exp(-({x}))))"


def _tanh(x: str) -> str:
    """tanh in a form that neither overflows nor cancels badly: sign(x) (1 - e^-2|x|) / (1 + e^-2|x|)."""
    e = f"tl.exp(-2.0 * tl.abs({x}))"
    return f"(tl.where(({x}) >= 0, 1.0, -1.0) * (1.0 - {e}) / (1.0 + {e}))"


def _softplus(x: str, beta: float = 1.0, threshold: float = 20.0) -> str:
    """PyTorch's softplus: linear above `threshold` (in units of beta x), else log(1 + e^(beta x)) / beta, written
    max(z, 0) + log(1 + e^-|z|) so that e^z never overflows."""
    z = f"(({x}) * {beta!r})"
    soft = f"((tl.maximum({z}, 0.0) + tl.log(1.0 + tl.exp(-tl.abs({z})))) / {beta!r})"
    return f"tl.where({z} > {threshold!r}, ({x}), {soft})"


def _clamp(x: str, lo: float, hi: float) -> str:
    return f"tl.minimum(tl.maximum({x}, {lo!r}), {hi!r})"


def _expm1_negative(x: str, alpha: float = 1.0) -> str:
    """alpha (e^(x / alpha) - 1) for x <= 0 only (x clamped to 0 first, so the other branch never overflows)."""
    inner = f"tl.minimum({x}, 0.0)" if alpha == 1.0 else f"tl.minimum({x}, 0.0) / {alpha!r}"
    return f"{alpha!r} * (tl.exp({inner}) - 1.0)"


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def _gelu(x: str, approximate: float = 0.0) -> str:
    """`approximate` is 1.0 for `approximate="tanh"` (arguments are numbers here), 0.0 for the exact erf form."""
    if approximate:
        inner = f"{SQRT_2_OVER_PI!r} * (({x}) + 0.044715 * ({x}) * ({x}) * ({x}))"
        return f"0.5 * ({x}) * (1.0 + {_tanh(inner)})"
    return f"0.5 * ({x}) * (1.0 + tl.erf(({x}) * {INV_SQRT_2!r}))"


@dataclass(frozen=True)
class Formula:
    """One activation: its parameters with PyTorch's defaults (in the order PyTorch takes them positionally after
    the input) and its formula in Triton's terms, for an input expression and the parameters' values."""

    name: str
    defaults: tuple[tuple[str, float], ...]
    build: Callable[..., str]
    region: str = ""
    """Where a wrong version of it usually goes wrong (`x < 0`, `|x| large`, `near a threshold`)."""

    def triton(self, x: str, params: Params | None = None) -> str:
        values = {name: float((params or {}).get(name, default)) for name, default in self.defaults}
        return self.build(x, **values)


def _table() -> dict[str, Formula]:
    entries = [
        Formula("relu", (), lambda x: f"tl.maximum({x}, 0.0)", "x < 0"),
        Formula("relu6", (), lambda x: _clamp(x, 0.0, 6.0), "near a threshold"),
        Formula(
            "leaky_relu",
            (("negative_slope", 0.01),),
            lambda x, negative_slope: f"tl.where(({x}) >= 0, ({x}), ({x}) * {negative_slope!r})",
            "x < 0",
        ),
        Formula(
            "elu",
            (("alpha", 1.0),),
            lambda x, alpha: f"tl.where(({x}) > 0, ({x}), {_elu(x, alpha)})",
            "x < 0",
        ),
        Formula(
            "selu",
            (),
            lambda x: f"{SELU_SCALE!r} * tl.where(({x}) > 0, ({x}), {_elu(x, SELU_ALPHA)})",
            "x < 0",
        ),
        Formula(
            "celu",
            (("alpha", 1.0),),
            lambda x, alpha: f"tl.where(({x}) > 0, ({x}), {_expm1_negative(x, alpha)})",
            "x < 0",
        ),
        Formula("softplus", (("beta", 1.0), ("threshold", 20.0)), _softplus, "near a threshold"),
        Formula("gelu", (("approximate", 0.0),), _gelu, "x < 0"),
        Formula(
            "hardtanh", (("min_val", -1.0), ("max_val", 1.0)), lambda x, min_val, max_val: _clamp(x, min_val, max_val)
        ),
        Formula("hardsigmoid", (), lambda x: _clamp(f"({x}) / 6.0 + 0.5", 0.0, 1.0), "near a threshold"),
        Formula("hardswish", (), lambda x: f"({x}) * {_clamp(f'({x}) / 6.0 + 0.5', 0.0, 1.0)}", "near a threshold"),
        Formula("silu", (), lambda x: f"({x}) * {_sigmoid(x)}", "x < 0"),
        Formula("mish", (), lambda x: f"({x}) * {_tanh(_softplus(x))}", "x < 0"),
        Formula("tanh", (), _tanh, "|x| large"),
        Formula("sigmoid", (), _sigmoid, "|x| large"),
        Formula("softsign", (), lambda x: f"({x}) / (1.0 + tl.abs({x}))", "x < 0"),
        Formula(
            "logsigmoid",
            (),
            lambda x: f"(tl.minimum({x}, 0.0) - tl.log(1.0 + tl.exp(-tl.abs({x}))))",
            "|x| large",
        ),
        Formula(
            "hardshrink",
            (("lambd", 0.5),),
            lambda x, lambd: f"tl.where(tl.abs({x}) > {lambd!r}, ({x}), 0.0)",
            "near a threshold",
        ),
        Formula(
            "softshrink",
            (("lambd", 0.5),),
            lambda x, lambd: (
                f"tl.where(({x}) > {lambd!r}, ({x}) - {lambd!r}, tl.where(({x}) < -{lambd!r}, ({x}) + {lambd!r}, 0.0))"
            ),
            "near a threshold",
        ),
    ]
    return {f.name: f for f in entries}


def _elu(x: str, alpha: float) -> str:
    return f"{alpha!r} * (tl.exp(tl.minimum({x}, 0.0)) - 1.0)"


FORMULAS: dict[str, Formula] = _table()
"""Activation name (PyTorch's functional name) -> its formula."""

_ALIASES = {
    "swish": "silu",
    "leakyrelu": "leaky_relu",
}
_MODULES = {f.name.replace("_", ""): f.name for f in FORMULAS.values()}
"""`nn.LeakyReLU` -> `leaky_relu`, `nn.SiLU` -> `silu`, `nn.Hardtanh` -> `hardtanh`..."""


def canonical(name: str) -> str | None:
    """The table's name for a called or constructed name (`F.silu`, `nn.SiLU`, `torch.sigmoid`, `x.relu`)."""
    key = name.split(".")[-1].lower().rstrip("_")
    key = _ALIASES.get(key, key)
    if key in FORMULAS:
        return key
    return _MODULES.get(key.replace("_", ""))


@dataclass(frozen=True)
class Activation:
    """One activation the reference's forward applies, in order, with its parameters resolved to numbers."""

    name: str
    params: dict[str, float] = field(default_factory=dict)
    line: int = 0
    gated: bool = False
    """Multiplied by its own input (`x * F.hardswish(x)`): the reference's value is `x * act(x)`."""

    @property
    def formula(self) -> Formula:
        return FORMULAS[self.name]

    def triton(self, x: str) -> str:
        made = self.formula.triton(x, self.params)
        return f"{x} * ({made})" if self.gated else made

    def text(self) -> str:
        args = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        called = f"{self.name}({args})" if args else self.name
        return f"{called} times its input" if self.gated else called


def activations(reference: str) -> list[Activation]:
    """The activations `Model.forward` applies, in the order it applies them; [] when it does not parse or has none."""
    tree = _parsed(reference)
    if tree is None:
        return []
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        return []
    methods = {n.name: n for n in model.body if isinstance(n, ast.FunctionDef)}
    forward = methods.get("forward")
    if forward is None:
        return []
    names = _bindings(tree, methods.get("__init__"))
    modules = _modules(methods.get("__init__"), names)
    gates = _gates(forward)
    found: list[Activation] = []
    for node in sorted(_calls(forward), key=_applied):
        made = _called(node, modules, names)
        if made is not None and id(node) in gates:  # `torch.sigmoid(x) * x` is a Swish written out
            gated = made.name != "sigmoid"
            made = Activation(made.name if gated else "silu", made.params if gated else {}, made.line, gated)
        if made is not None:
            found.append(made)
    return found


@dataclass(frozen=True)
class Expression:
    """One elementwise step the reference's forward writes out of several calls and arithmetic on one tensor
    (`x = x * torch.sigmoid(x + 3) / 6`, `x = torch.clamp(x, min=-1, max=1)`), with its numbers resolved: a formula
    the table has no name for, that kope writes in Triton's terms for any input expression."""

    source: str
    """The reference's text of the value (`x * torch.sigmoid(x + 3) / 6`)."""
    input: str
    """The tensor it reads (`x`)."""
    line: int = 0
    names: tuple[tuple[str, float], ...] = ()
    """The numbers its names are bound to (`self.scale`, `min_value`)."""

    def triton(self, x: str) -> str:
        made = _translate(ast.parse(self.source, mode="eval").body, self.input, x, dict(self.names))
        assert made is not None  # built only where it translates
        return made

    def text(self) -> str:
        return f"`{self.source}`"


_TL_CALLS = {
    "exp": "tl.exp",
    "log": "tl.log",
    "abs": "tl.abs",
    "sqrt": "tl.sqrt",
    "rsqrt": "tl.rsqrt",
    "erf": "tl.erf",
    "sin": "tl.sin",
    "cos": "tl.cos",
    "floor": "tl.floor",
    "ceil": "tl.ceil",
}
"""PyTorch's elementwise functions that Triton has under the same meaning (`torch.exp`, `x.exp()`)."""
_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_COMPARE = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}


def _translate(node: ast.expr, input_name: str, x: str, names: Mapping[str, float]) -> str | None:
    """A reference expression of one tensor (`input_name`) in Triton's terms, the tensor written `x`; None where it
    uses anything else (another tensor, a reduction, a function Triton does not have)."""

    def go(n: ast.expr) -> str | None:
        if isinstance(n, ast.Name) and n.id == input_name:
            return f"({x})"
        number = _number(n, names) if not (isinstance(n, ast.Constant) and isinstance(n.value, str)) else None
        if number is not None:
            return repr(number)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            inner = go(n.operand)
            return f"(-{inner})" if inner is not None else None
        if isinstance(n, ast.BinOp) and type(n.op) in _ARITH:
            left, right = go(n.left), go(n.right)
            return f"({left} {_ARITH[type(n.op)]} {right})" if left is not None and right is not None else None
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            base, power = go(n.left), _number(n.right, names)
            if base is None or power not in (2.0, 3.0, 0.5):
                return None
            return f"tl.sqrt({base})" if power == 0.5 else "(" + " * ".join([base] * int(power or 0)) + ")"
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in _COMPARE:
            left, right = go(n.left), go(n.comparators[0])
            return f"({left} {_COMPARE[type(n.ops[0])]} {right})" if left is not None and right is not None else None
        if isinstance(n, ast.Call):
            return _translate_call(n, go, names)
        return None

    return go(node)


def _translate_call(node: ast.Call, go: Callable[[ast.expr], str | None], names: Mapping[str, float]) -> str | None:
    func = node.func
    dotted = ast.unparse(func)
    method = isinstance(func, ast.Attribute) and not dotted.startswith(("torch.", "F.", "nn.", "functional."))
    args = [func.value, *node.args] if method and isinstance(func, ast.Attribute) else list(node.args)
    if not args or any(isinstance(a, ast.Starred) for a in args):
        return None
    short = dotted.split(".")[-1].lower().rstrip("_")
    inner = go(args[0])
    if inner is None:
        return None
    if short in _TL_CALLS and len(args) == 1 and not node.keywords:
        return f"{_TL_CALLS[short]}({inner})"
    if short == "log1p" and len(args) == 1:
        return f"tl.log(1.0 + {inner})"
    if short == "expm1" and len(args) == 1:
        return f"(tl.exp({inner}) - 1.0)"
    if short in ("clamp", "clip", "clamp_min", "clamp_max"):
        given = dict(zip(("min", "max"), args[1:], strict=False))
        given.update({k.arg: k.value for k in node.keywords if k.arg in ("min", "max")})
        if short != "clamp" and short != "clip":
            given = {short.removeprefix("clamp_"): args[1]} if len(args) == 2 else {}
        low = _number(given["min"], names) if "min" in given else None
        high = _number(given["max"], names) if "max" in given else None
        if ("min" in given and low is None) or ("max" in given and high is None) or (low is None and high is None):
            return None
        made = inner if low is None else f"tl.maximum({inner}, {low!r})"
        return made if high is None else f"tl.minimum({made}, {high!r})"
    if short == "where" and len(args) == 3 and not method:
        parts = [go(a) for a in args]
        return f"tl.where({parts[0]}, {parts[1]}, {parts[2]})" if None not in parts else None
    name = canonical(dotted)
    if name is None:
        return None
    return FORMULAS[name].triton(inner, _params(FORMULAS[name], args[1:], node.keywords, names))


def expressions(reference: str) -> list[Expression]:
    """The elementwise steps `Model.forward` writes out of calls and arithmetic on one tensor (`y = x * torch.sigmoid(x
    + 3) / 6`), in order; a value that is one activation of the table (or one times its input) is `activations`'s,
    not one of these. [] when it does not parse or has none."""
    tree = _parsed(reference)
    if tree is None:
        return []
    forward = _model_method(tree, "forward")
    if forward is None:
        return []
    names = _bindings(tree, _model_method(tree, "__init__"))
    modules = _modules(_model_method(tree, "__init__"), names)
    found: list[Expression] = []
    for node in ast.walk(forward):
        if not isinstance(node, ast.Assign | ast.Return) or node.value is None:
            continue
        value = node.value
        if not any(isinstance(n, ast.Call) for n in ast.walk(value)):
            continue
        if isinstance(value, ast.Call) and _called(value, modules, names) is not None:
            continue  # one activation of the table
        if _gate_call(value) is not None:
            continue  # `x * act(x)`
        tensors = _unbound(value, names)
        if len(tensors) != 1:
            continue
        (tensor,) = tensors
        if _translate(value, tensor, tensor, names) is None:
            continue
        used = {ast.unparse(n) for n in ast.walk(value) if isinstance(n, ast.Name | ast.Attribute)}
        bound = tuple(sorted((k, v) for k, v in names.items() if k in used))
        found.append(Expression(ast.unparse(value), tensor, node.lineno, bound))
    return sorted(found, key=lambda e: e.line)


def _unbound(value: ast.expr, names: Mapping[str, float]) -> set[str]:
    """The names an expression reads that are not bound to numbers (its tensors), a called function's module and a
    bound attribute (`self.scale`) left out."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Attribute) and ast.unparse(node) in names:
            return
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and not _module_path(func.value):
                visit(func.value)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                visit(arg)
            return
        if isinstance(node, ast.Name) and node.id not in names:
            found.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(value)
    return found


def _module_path(node: ast.expr) -> bool:
    """`torch`, `F`, `torch.nn.functional`: where a function is looked up, not a tensor."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in ("torch", "F", "nn", "functional", "math")


def _gates(forward: ast.FunctionDef) -> set[int]:
    """The calls multiplied by their own input: `act(x) * x` or `x * act(x)`."""
    return {id(call) for node in ast.walk(forward) if (call := _gate_call(node)) is not None}


def _gate_call(node: ast.AST) -> ast.Call | None:
    """The call of `act(x) * x` or `x * act(x)`; None for anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for call, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(call, ast.Call) and call.args and ast.dump(call.args[0]) == ast.dump(other):
                return call
    return None


def _applied(call: ast.Call) -> tuple[int, int]:
    """Where a call ends: Python finishes an inner call (`F.gelu` in `F.softplus(F.gelu(x))`) before the outer one,
    so ordering by the end is the order they are applied in."""
    return (call.end_lineno or call.lineno, call.end_col_offset or call.col_offset)


def _calls(forward: ast.FunctionDef) -> list[ast.Call]:
    return [n for n in ast.walk(forward) if isinstance(n, ast.Call)]


def _called(node: ast.Call, modules: dict[str, Activation], names: Mapping[str, float]) -> Activation | None:
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        built = modules.get(func.attr)
        return Activation(built.name, dict(built.params), node.lineno) if built is not None else None
    dotted = ast.unparse(func)
    name = canonical(dotted)
    if name is None:
        return None
    method = isinstance(func, ast.Attribute) and not dotted.startswith(("torch.", "F.", "nn.", "functional."))
    args = node.args if method else node.args[1:]
    return Activation(name, _params(FORMULAS[name], args, node.keywords, names), node.lineno)


def _params(formula: Formula, args: list[ast.expr], keywords: list[ast.keyword], names: Mapping[str, float]) -> dict:
    """The formula's parameters given by a call (positional after the input, or by keyword), resolved to numbers."""
    given: dict[str, float] = {}
    order = [n for n, _ in formula.defaults]
    for name, arg in zip(order, args, strict=False):
        value = _number(arg, names)
        if value is not None:
            given[name] = value
    for keyword in keywords:
        if keyword.arg in order:
            value = _number(keyword.value, names)
            if value is not None:
                given[keyword.arg] = value
    return given


def _number(node: ast.expr, names: Mapping[str, float]) -> float | None:
    """A literal, a name bound to a number, `-x`, or `approximate="tanh"` (1.0) / `"none"` (0.0)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return 1.0 if node.value == "tanh" else 0.0
        if isinstance(node.value, bool):
            return None
        if isinstance(node.value, int | float):
            return float(node.value)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand, names)
        return -inner if inner is not None else None
    if isinstance(node, ast.Name | ast.Attribute):
        return names.get(ast.unparse(node))
    return None


def _bindings(tree: ast.Module, init: ast.FunctionDef | None) -> dict[str, float]:
    """Names bound to numbers: module-level constants, `__init__`'s parameters (by `get_init_inputs()`'s list or
    their defaults) and `self.name = <number>` in `__init__`."""
    module: dict[str, float] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            value = _number(statement.value, module)
            if isinstance(target, ast.Name) and value is not None:
                module[target.id] = value
    names = dict(module)
    if init is None:
        return names
    params = [a.arg for a in init.args.args[1:]]
    defaults = init.args.defaults
    for param, default in zip(params[len(params) - len(defaults) :], defaults, strict=False):
        value = _number(default, module)
        if value is not None:
            names[param] = value
    getter = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_init_inputs"), None)
    returned = next((n.value for n in ast.walk(getter) if isinstance(n, ast.Return)), None) if getter else None
    if isinstance(returned, ast.List | ast.Tuple):
        for param, arg in zip(params, returned.elts, strict=False):
            value = _number(arg, module)
            if value is not None:
                names[param] = value
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
            value = _number(node.value, names)
            if value is not None:
                names[ast.unparse(node.targets[0])] = value
    return names


def _modules(init: ast.FunctionDef | None, names: Mapping[str, float]) -> dict[str, Activation]:
    """`self.attr = nn.Xxx(...)` in `__init__`, by attribute."""
    found: dict[str, Activation] = {}
    if init is None:
        return found
    for node in ast.walk(init):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            continue
        name = canonical(ast.unparse(node.value.func))
        if name is None:
            continue
        found[target.attr] = Activation(
            name, _params(FORMULAS[name], node.value.args, node.value.keywords, names), node.lineno
        )
    return found


_LINEAR = ("linear", "lazylinear")
"""`nn.Linear` and its kin, by lower-cased class name; convolutions are matched by prefix (`conv`)."""


@dataclass(frozen=True)
class Layer:
    """A weighted layer the reference's `__init__` builds (`self.gemm = nn.Linear(k, n)`): its attribute, its kind
    (`linear` or `conv`), whether it has a bias, the text of its output size as the reference writes it
    (`out_features`), and the position of each `__init__` parameter it names (to read it in `ModelNew`'s)."""

    attribute: str
    kind: str
    bias: bool
    out: str
    params: tuple[str, ...] = ()
    """`Model.__init__`'s parameters, in order (`ModelNew` has the same signature, perhaps other names)."""
    inp: str = ""
    """The text of its input size (`in_features`), as `out` is of its output size."""
    square: bool = False
    """Whether the task makes its input and output sizes the same number (a weight's two layouts then look alike)."""


def _self_calls(init: ast.FunctionDef) -> Iterator[tuple[str, ast.Call]]:
    """`self.<attribute> = <call>` in `__init__`, in source order: (attribute, call)."""
    for node in sorted(ast.walk(init), key=lambda n: getattr(n, "lineno", 0)):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            yield target.attr, node.value


def layers(reference: str) -> list[Layer]:
    """The Linear and convolution layers `Model.__init__` builds, in source order; [] when it does not parse or has
    none. A layer has a bias unless its `bias=` argument is False (a literal, or an `__init__` parameter that
    `get_init_inputs()` or its default makes False)."""
    tree = _parsed(reference)
    if tree is None:
        return []
    init = _model_method(tree, "__init__")
    if init is None:
        return []
    params = tuple(a.arg for a in init.args.args[1:])
    bound = _bindings(tree, init)
    found: list[Layer] = []
    for attribute, call in _self_calls(init):
        cls = ast.unparse(call.func).split(".")[-1].lower()
        kind = "linear" if cls in _LINEAR else "conv" if cls.startswith("conv") else ""
        out = next((k.value for k in call.keywords if k.arg in ("out_features", "out_channels")), None)
        if out is None and len(call.args) >= 2:
            out = call.args[1]
        inp = next((k.value for k in call.keywords if k.arg in ("in_features", "in_channels")), None)
        if inp is None and call.args and cls != "lazylinear":
            inp = call.args[0]
        if not kind or out is None:
            continue
        position = 2 if kind == "linear" else 8 if cls.startswith("convtranspose") else 7
        flag = next((k.value for k in call.keywords if k.arg == "bias"), None)
        if flag is None and position < len(call.args):
            flag = call.args[position]
        sizes = [_number(side, bound) for side in (inp, out) if side is not None]
        square = len(sizes) == 2 and sizes[0] is not None and sizes[0] == sizes[1]
        text = ast.unparse(inp) if inp is not None else ""
        found.append(Layer(attribute, kind, _true(flag, tree, init), ast.unparse(out), params, text, square))
    return found


_AXIS_NORMS = (
    "layernorm",
    "layer_norm",
    "groupnorm",
    "group_norm",
    "batchnorm",
    "batch_norm",
    "instancenorm",
    "instance_norm",
    "rmsnorm",
    "rms_norm",
    "localresponsenorm",
    "local_response_norm",
    "softmax",
    "log_softmax",
    "logsoftmax",
    "normalize",
)
"""Normalisations along one axis (or trailing axes) by lower-cased name prefix (`nn.LayerNorm`, `F.softmax`)."""


def axis_norms(reference: str) -> list[str]:
    """The normalisations along an axis that `Model.__init__` builds or `Model.forward` calls (`layernorm` for
    `nn.LayerNorm(c)`, `softmax` for `torch.softmax(x, dim=1)`), lower-cased, in source order; [] when it does not
    parse or normalises nothing. A kernel that takes the axis for another (a `LayerNorm(out_channels)` after a
    convolution normalises the last dimension, not the channels) is wrong everywhere."""
    return [name for name, _ in _model_calls(reference, _AXIS_NORMS)]


def triangular(reference: str) -> bool:
    """Whether the reference makes a triangle anywhere (`torch.triu`, `torch.tril`, `x.tril()`, in its model or its
    inputs): a comparison of row and column indices in a kernel is then the triangle's orientation."""
    tree = _parsed(reference)
    if tree is None:
        return False
    return any(
        (n.attr if isinstance(n, ast.Attribute) else n.id) in ("triu", "tril")
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute | ast.Name)
    )


def _model_calls(reference: str, prefixes: tuple[str, ...]) -> list[tuple[str, ast.Call]]:
    """The calls `Model.__init__` and `Model.forward` make whose lower-cased last name starts with one of `prefixes`
    (`nn.MaxPool3d` is `maxpool3d`), with that name, in source order; [] when the reference does not parse."""
    tree = _parsed(reference)
    if tree is None:
        return []
    found: list[tuple[int, int, str, ast.Call]] = []
    for method in (_model_method(tree, "__init__"), _model_method(tree, "forward")):
        for node in ast.walk(method) if method is not None else ():
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func).split(".")[-1].lower()
                if name.startswith(prefixes):
                    found.append((node.lineno, node.col_offset, name, node))
    return [(name, node) for _, _, name, node in sorted(found, key=lambda f: f[:2])]


@dataclass(frozen=True)
class BatchNorm:
    """A batch norm the reference's `__init__` builds (`self.bn = nn.BatchNorm2d(out_channels, eps=1e-3)`): its
    attribute, the text of its feature count, its epsilon, and `Model.__init__`'s parameters in order (to read the
    count in `ModelNew`'s)."""

    attribute: str
    features: str
    eps: float
    params: tuple[str, ...] = ()


def batch_norms(reference: str) -> list[BatchNorm]:
    """The `nn.BatchNorm1d/2d/3d` layers `Model.__init__` assigns to an attribute, in source order; [] when it does
    not parse or has none."""
    tree = _parsed(reference)
    init = _model_method(tree, "__init__") if tree is not None else None
    if tree is None or init is None:
        return []
    params = tuple(a.arg for a in init.args.args[1:])
    names = _bindings(tree, init)
    found: list[BatchNorm] = []
    for attribute, call in _self_calls(init):
        if not ast.unparse(call.func).split(".")[-1].lower().startswith("batchnorm"):
            continue
        features = next((k.value for k in call.keywords if k.arg == "num_features"), None)
        features = features if features is not None else call.args[0] if call.args else None
        eps_node = next((k.value for k in call.keywords if k.arg == "eps"), None)
        eps_node = eps_node if eps_node is not None else call.args[1] if len(call.args) > 1 else None
        eps = _number(eps_node, names) if eps_node is not None else 1e-5
        if features is not None and eps is not None:
            found.append(BatchNorm(attribute, ast.unparse(features), eps, params))
    return found


_POOLS = ("maxpool", "avgpool", "max_pool", "avg_pool", "lppool", "lp_pool")
"""Pooling layers and functions by lower-cased name prefix (`nn.MaxPool3d`, `F.avg_pool2d`); adaptive pools,
whose windows are not a fixed size, are not among them."""


def pool_ceil_modes(reference: str) -> list[bool]:
    """The `ceil_mode` of every fixed-window pooling the reference builds in `Model.__init__` or calls in
    `Model.forward` (`nn.MaxPool2d(2)`, `F.avg_pool1d(x, 3, ceil_mode=True)`), in source order: False (PyTorch's
    default: windows that do not fit are dropped, the output size is a floor division) unless a literal says True;
    [] when it does not parse or pools nothing."""
    found: list[bool] = []
    for _, node in _model_calls(reference, _POOLS):
        flag = next((k.value for k in node.keywords if k.arg == "ceil_mode"), None)
        found.append(isinstance(flag, ast.Constant) and flag.value is True)
    return found


def _true(flag: ast.expr | None, tree: ast.Module, init: ast.FunctionDef) -> bool:
    """Whether a `bias=` argument is true: absent (PyTorch's default), a literal, or an `__init__` parameter given by
    `get_init_inputs()` or else by its default; an argument that cannot be read counts as true."""
    if flag is None:
        return True
    if isinstance(flag, ast.Constant):
        return bool(flag.value)
    if not isinstance(flag, ast.Name):
        return True
    params = [a.arg for a in init.args.args[1:]]
    if flag.id not in params:
        return True
    at = params.index(flag.id)
    getter = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_init_inputs"), None)
    returned = next((n.value for n in ast.walk(getter) if isinstance(n, ast.Return)), None) if getter else None
    if isinstance(returned, ast.List | ast.Tuple) and at < len(returned.elts):
        given = returned.elts[at]
        return bool(given.value) if isinstance(given, ast.Constant) else True
    defaults = init.args.defaults
    first_default = len(params) - len(defaults)
    if at >= first_default:
        default = defaults[at - first_default]
        return bool(default.value) if isinstance(default, ast.Constant) else True
    return True


def steps(reference: str) -> list[str]:
    """The kinds of the elementwise steps `Model.forward` applies, in order: `shift` (a layer that adds its bias,
    `x + b`, `x - b`), `scale` (`x * s`, `x / s`), `act` (an activation of the table). [] when it does not parse."""
    tree = _parsed(reference)
    if tree is None:
        return []
    forward = _model_method(tree, "forward")
    if forward is None:
        return []
    biased = {layer.attribute for layer in layers(reference) if layer.bias}
    modules = _modules(_model_method(tree, "__init__"), {})
    found: list[tuple[tuple[int, int], str]] = []
    for node in ast.walk(forward):
        kind = ""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            kind = "shift"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
            kind = "scale"
        elif isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            attribute = func.removeprefix("self.")
            if attribute in biased:
                kind = "shift"
            elif attribute in modules or canonical(func) is not None:
                kind = "act"
        if kind:
            found.append(((getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0), kind))
    return [kind for _, kind in sorted(found)]


def task_constants(reference: str) -> dict[str, str]:
    """The task module's constants, each with the statement that binds it (`batch_size = 256`), in source order:
    names bound once, to a literal (`256`, `(3, 5)`, `0.5`); {} when it does not parse."""
    tree = _parsed(reference)
    if tree is None:
        return {}
    counts = binding_counts(tree)
    found: dict[str, str] = {}
    for name, value in module_bindings(tree):
        if counts[name] != 1:
            continue
        try:
            ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, RecursionError):
            continue
        found[name] = f"{name} = {ast.unparse(value)}"
    return found


def _parsed(reference: str) -> ast.Module | None:
    """The reference's syntax tree; None when it does not parse (or nests deeper than the parser recurses)."""
    try:
        return syntax.parse(reference)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _model_method(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        return None
    return next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
