"""Dimensions: operands passed with the wrong layout, and sizes taken from the wrong dimension.

The bugs real models make when a problem transposes its inputs (`torch.matmul(A.T, B.T)`) or when they read a
tensor's sizes in another order than it has:

- `transposed-operands`: at a launch, the stride pairs of several tensors swapped at once (`A.stride(0),
  A.stride(1)` -> `A.stride(1), A.stride(0)` for A and B together): a kernel written for `A.T @ B.T` given A and B
  as stored. One swap alone still reads out of bounds, so the search never sees it improve; the joint edit is one
  step. Cued where the reference's forward transposes exactly those inputs (`.T`, `.t()`, `.transpose(...)`,
  `.mT`, `permute`) and the host passes them untransposed, in rising dimension order.
- `size-swap`: two sizes passed to a kernel exchanged at once (`M, N` passed as `N, M`); `argument-swap` changes
  one at a time, which passes one size twice.
- `shape-unpack`: the names of a shape unpacking exchanged (`K, M = A.shape` -> `M, K = A.shape`): every use of
  both sizes is wrong together.
- `reshape-axes`: a tensor whose axes the host named (`C_in, C_out, kD, kH, kW = weight.shape`) reshaped into a
  matrix one side of which is a single inner axis (`weight.reshape(K_total, C_out)`, a transposed convolution's
  weight flattened as if its output channels came last): that axis is moved to its side first (`.movedim(1, -1)`).
- `axis-swap`: a wrapper that normalises the channels where the reference normalises the last dimension (a
  `LayerNorm(out_channels)` after a convolution), or the reverse, called on the layout with the two exchanged and
  its output exchanged back.

- `dot-transpose`: a `tl.dot` whose operand was loaded in the other order (a Linear's weight read as its `(N, K)`
  tile where the product wants `(K, N)`: "input and other must have equal reduction dimensions" where the blocks
  differ, wrong values where they are square): `tl.dot(a, tl.trans(b))`, and `tl.dot(tl.trans(a), b)`. Grounded
  on the compiler's message at the dot's line.

Their bench mutation is `operands-untransposed`: a launch that passes a transposed operand's strides in falling
order (`A.stride(1), A.stride(0)`) passes them as stored.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

import libcst as cst

from kope import syntax
from kope.bugs.analysis import constexprs_of, names_in, params_of
from kope.bugs.edit import Edit, Program, address_exprs, assignments, operator
from kope.bugs.mutation import Context, Mutation, mutation
from kope.bugs.reference import axis_norms, layers
from kope.source import LaunchSite, call_name

MAX_TENSORS = 3
"""Tensors whose stride pairs `transposed-operands` swaps jointly: every non-empty subset of at most these (7)."""

_TRANSPOSING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH"})
_TRANSPOSING_METHODS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims", "movedim", "adjoint"})
_SAME_LAYOUT = frozenset({"contiguous", "to", "float", "half", "bfloat16", "double", "detach", "clone", "cuda", "cpu"})
"""Methods that keep a tensor's dimensions in their order (`contiguous` keeps the logical order too)."""


# -- which inputs the reference transposes --------------------------------------------------------


def _transposed_operand(node: ast.AST) -> ast.expr | None:
    """The tensor a transposing expression transposes: `x` of `x.T`, `x.t()`, `x.transpose(0, 1)`,
    `torch.transpose(x, 0, 1)`, `x.permute(...)`; None for any other node."""
    if isinstance(node, ast.Attribute) and node.attr in _TRANSPOSING_ATTRIBUTES:
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TRANSPOSING_METHODS:
        if call_name(node).startswith("torch."):
            return node.args[0] if node.args else None
        return node.func.value
    return None


def _forward(tree: ast.Module, cls: str) -> ast.FunctionDef | None:
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    if model is None:
        return None
    return next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)


def transposed_inputs(reference: str) -> set[str]:
    """The inputs the reference's `Model.forward` transposes: its parameters by position (`"0"` for the first after
    `self`) and the module's attributes (`"self.weight"`). Empty when it does not parse or transposes none."""
    try:
        tree = syntax.parse(reference)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    forward = _forward(tree, "Model")
    if forward is None:
        return set()
    params = [a.arg for a in forward.args.args[1:]]
    found: set[str] = set()
    for node in ast.walk(forward):
        operand = _transposed_operand(node)
        if isinstance(operand, ast.Name) and operand.id in params:
            found.add(str(params.index(operand.id)))
        elif _is_self_attribute(operand):
            assert operand is not None
            found.add(ast.unparse(operand))
    return found


def _is_self_attribute(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


# -- which input a host tensor is ------------------------------------------------------------------


def _functions(program: Program) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(program.tree) if isinstance(n, ast.FunctionDef) and not program.parsed.is_kernel(n)]


def _enclosing(program: Program, node: ast.AST) -> ast.FunctionDef | None:
    """The innermost host function around a node."""
    line = getattr(node, "lineno", 0)
    around = [f for f in _functions(program) if f.lineno <= line <= (f.end_lineno or f.lineno)]
    return max(around, key=lambda f: f.lineno, default=None)


def _bindings(function: ast.FunctionDef, name: str) -> list[ast.expr]:
    """The values a function binds to `name` (`a = x`, `a, b = x, y`), in source order."""
    found: list[ast.expr] = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == name:
                found.append(node.value)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                for element, value in zip(target.elts, node.value.elts, strict=False):
                    if isinstance(element, ast.Name) and element.id == name:
                        found.append(value)
    return found


def origin(program: Program, function: ast.FunctionDef | None, expr: ast.expr, depth: int = 4) -> tuple[str, bool]:
    """Which input of `ModelNew.forward` a host tensor is (its position, `"0"`...; a module attribute,
    `"self.weight"`), through the names it is bound to and the helpers' calls, and whether the host transposed it on
    the way (`a = A.t()`). `("", False)` when it is not known."""
    flipped = False
    while True:
        if isinstance(expr, ast.Attribute) and expr.attr in _TRANSPOSING_ATTRIBUTES:
            flipped, expr = not flipped, expr.value
        elif (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and not call_name(expr).startswith("torch.")
        ):
            if expr.func.attr in _TRANSPOSING_METHODS:
                flipped = not flipped
            elif expr.func.attr not in _SAME_LAYOUT:
                return "", False
            expr = expr.func.value
        else:
            break
    if _is_self_attribute(expr):
        return ast.unparse(expr), flipped
    if not isinstance(expr, ast.Name) or function is None or depth < 0:
        return "", False
    params = [a.arg for a in function.args.args]
    bound = [v for v in _bindings(function, expr.id) if not _refers_to(v, expr.id)]
    if bound:
        found, again = origin(program, function, bound[-1], depth - 1)
        return found, flipped != again
    if expr.id not in params:
        return "", False
    position = params.index(expr.id)
    method = bool(params) and params[0] == "self"
    if function.name == "forward" and method:
        return str(position - 1), flipped
    for call in ast.walk(program.tree):
        if not (isinstance(call, ast.Call) and call_name(call, last=True) == function.name):
            continue
        index = position - 1 if method and isinstance(call.func, ast.Attribute) else position
        if 0 <= index < len(call.args) and not isinstance(call.args[index], ast.Starred):
            found, again = origin(program, _enclosing(program, call), call.args[index], depth - 1)
            return found, flipped != again
    return "", False


def _transposes(value: ast.expr) -> bool:
    """Whether a method chain transposes (`w.contiguous().t()`, `x.T`)."""
    while isinstance(value, ast.Call | ast.Attribute):
        if _transposed_operand(value) is not None:
            return True
        value = value.func if isinstance(value, ast.Call) else value.value
    return False


def _refers_to(value: ast.expr, name: str) -> bool:
    """`A = A.contiguous()`: a name bound to a value made from itself (its origin is what it was before)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        value = value.func.value
    while isinstance(value, ast.Attribute) and value.attr in _TRANSPOSING_ATTRIBUTES:
        value = value.value
    return isinstance(value, ast.Name) and value.id == name


# -- a launch's stride arguments ------------------------------------------------------------------


def _stride_of(node: ast.AST) -> tuple[str, int] | None:
    """`x.stride(1)` -> ("x", 1); `x.stride()` -> ("x", -1) (all of them)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "stride":
        if not node.args and not node.keywords:
            return ast.unparse(node.func.value), -1
        if len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is int:
            return ast.unparse(node.func.value), node.args[0].value
    return None


def _bound_stride(function: ast.FunctionDef | None, name: str) -> tuple[str, int] | None:
    """The stride a host name holds, bound once: `s_am = a.stride(0)`, `s_am, s_ak = a.stride()`."""
    if function is None:
        return None
    found: list[tuple[str, int]] = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id == name:
            stride = _stride_of(value)
            found.append(stride if stride is not None and stride[1] >= 0 else ("", -1))
        elif isinstance(target, ast.Tuple):
            names = [e.id if isinstance(e, ast.Name) else "" for e in target.elts]
            if name in names:
                stride = _stride_of(value)
                found.append((stride[0], names.index(name)) if stride is not None and stride[1] < 0 else ("", -1))
    if len(found) == 1 and found[0][0]:
        return found[0]
    return None


def _indexed_stride(function: ast.FunctionDef | None, node: ast.AST) -> tuple[str, int] | None:
    """`x_strides[1]` where the host bound `x_strides = x.stride()`."""
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
        and node.slice.value >= 0
        and function is not None
    ):
        return None
    values = _bindings(function, node.value.id)
    stride = _stride_of(values[0]) if len(values) == 1 else None
    if stride is None or stride[1] >= 0:
        return None
    return stride[0], node.slice.value


def launch_strides(program: Program, call: ast.Call) -> list[tuple[ast.expr, str, int]]:
    """A launch's stride arguments in order: (the argument, its tensor, the dimension), for `t.stride(d)`, names the
    host binds to one (`stride_am = A.stride(0)`, `stride_am, stride_ak = A.stride()`) and `t_strides[d]`."""
    function = _enclosing(program, call)
    found: list[tuple[ast.expr, str, int]] = []
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        stride = _stride_of(arg)
        if stride is not None and stride[1] < 0:
            stride = None
        if stride is None and isinstance(arg, ast.Name):
            stride = _bound_stride(function, arg.id)
        if stride is None:
            stride = _indexed_stride(function, arg)
        if stride is not None:
            found.append((arg, *stride))
    return found


# -- which dimension a stride parameter walks -----------------------------------------------------


def _closure(kernel: ast.FunctionDef, names: set[str], depth: int = 2) -> set[str]:
    """Names and the names in the values assigned to them, `depth` assignments back (`k_left = K - k` -> K)."""
    assigned = assignments(kernel)
    found = set(names)
    frontier = set(names)
    for _ in range(depth):
        frontier = {n for name in frontier for a in assigned.get(name, []) for n in names_in(a.value)} - found
        found |= frontier
    return found


def _bound(program: Program, kernel: ast.FunctionDef, stride: str) -> str | None:
    """The size parameter that bounds the indices a stride parameter scales in the kernel's addresses
    (`offs_m[:, None] * stride_am` and `offs_m < M`: `M`); None unless exactly one does."""
    index: set[str] = set()
    advances = [n.value for n in ast.walk(kernel) if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)]
    for expr in [*address_exprs(kernel), *advances]:
        for node in ast.walk(expr):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(side, ast.Name) and side.id == stride:
                        index |= names_in(other)
    params = set(params_of(kernel))
    index -= params
    sizes = set(program.scalars(kernel))
    found: set[str] = set()
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            if names_in(side) & index:
                found |= _closure(kernel, names_in(other)) & sizes
    return found.pop() if len(found) == 1 else None


def _shape_dim(function: ast.FunctionDef | None, name: str, depth: int = 2) -> tuple[str, int] | None:
    """The tensor dimension a host size name holds, bound once: `m = x.shape[0]`, `x.size(0)`, `k, m = x.shape`,
    `K = K1` for such a `K1`."""
    if function is None or depth < 0:
        return None
    found: list[tuple[str, int] | None] = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id == name:
            found.append(
                _dim_of(value) or (_shape_dim(function, value.id, depth - 1) if isinstance(value, ast.Name) else None)
            )
        elif isinstance(target, ast.Tuple) and name in [e.id for e in target.elts if isinstance(e, ast.Name)]:
            names = [e.id if isinstance(e, ast.Name) else "" for e in target.elts]
            if isinstance(value, ast.Tuple) and len(value.elts) == len(names):  # `M, K = A.shape[1], A.shape[0]`
                found.append(_dim_of(value.elts[names.index(name)]))
                continue
            tensor: ast.expr | None = None  # `x` of `k, m = x.shape` or `x.size()`; not of a slice of one
            if _unpacked_shape(node) is not None and isinstance(value, ast.Attribute):
                tensor = value.value
            elif _unpacked_shape(node) is not None and isinstance(value, ast.Call):
                tensor = value.func.value if isinstance(value.func, ast.Attribute) else None
            found.append((ast.unparse(tensor), names.index(name)) if tensor is not None else None)
    return found[0] if len(found) == 1 else None


def _dim_of(value: ast.expr) -> tuple[str, int] | None:
    """`x.shape[1]`, `x.size(1)` -> ("x", 1)."""
    if (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Attribute)
        and value.value.attr == "shape"
        and isinstance(value.slice, ast.Constant)
        and type(value.slice.value) is int
        and value.slice.value >= 0
    ):
        return ast.unparse(value.value.value), value.slice.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "size"
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Constant)
        and type(value.args[0].value) is int
        and value.args[0].value >= 0
    ):
        return ast.unparse(value.func.value), value.args[0].value
    return None


def _walked_dims(program: Program, site: LaunchSite, tensor: str, args: tuple[ast.expr, ast.expr]) -> list[int | None]:
    """For each of a tensor's two stride arguments, the dimension of the same tensor whose size bounds the indices
    its parameter scales in the kernel (through the size the launch passes for that bound and the host's shape
    reading), None where that is not known."""
    params = params_of(site.kernel)
    passed = {id(arg): name for name, arg in zip(params, site.call.args, strict=False)}
    passed |= {id(k.value): k.arg for k in site.call.keywords if k.arg}
    given = {name: arg for name, arg in zip(params, site.call.args, strict=False)}
    given |= {k.arg: k.value for k in site.call.keywords if k.arg}
    function = _enclosing(program, site.call)
    if function is None or any(_transposes(v) for v in _bindings(function, tensor)):
        return [None, None]  # `w = w.t()` after `n = w.shape[0]`: which shape a size read is not known
    found: list[int | None] = []
    for arg in args:
        param = passed.get(id(arg))
        bound = _bound(program, site.kernel, param) if param else None
        size = given.get(bound) if bound else None
        dim = _shape_dim(function, size.id) if isinstance(size, ast.Name) else None
        found.append(dim[1] if dim is not None and dim[0] == tensor else None)
    return found


# -- the search's edits (repair operators) ---------------------------------------------------------


def _pairs(strides: list[tuple[ast.expr, str, int]]) -> dict[str, tuple[ast.expr, ast.expr]]:
    """Each tensor's two highest dimensions' stride arguments (lower dimension first) where it passes two or more
    distinct dimensions once each: the pair a transpose (`.T`, `.mT`, `transpose(-2, -1)`) exchanges."""
    by_tensor: dict[str, dict[int, list[ast.expr]]] = {}
    for arg, tensor, dim in strides:
        by_tensor.setdefault(tensor, {}).setdefault(dim, []).append(arg)
    found: dict[str, tuple[ast.expr, ast.expr]] = {}
    for tensor, dims in by_tensor.items():
        if len(dims) < 2 or any(len(args) > 1 for args in dims.values()):
            continue
        low, high = sorted(dims)[-2:]
        found[tensor] = (dims[low][0], dims[high][0])
    return found


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


@operator("transposed-operands", "wrong-stride")
def transposed_operands(program: Program) -> Iterator[Edit]:
    """At a launch, the stride pairs of several tensors swapped together: every non-empty subset of at most
    `MAX_TENSORS` tensors that pass two strides (those the reference transposes first, then in launch order). Cued
    for the subset of exactly the inputs the reference's forward transposes, where the host passes each of them
    untransposed with its strides in rising dimension order."""
    transposed = transposed_inputs(program.reference)
    for site in program.parsed.launches:
        call = site.call
        if any(isinstance(a, ast.Starred) for a in call.args):
            continue
        strides = launch_strides(program, call)
        pairs = _pairs(strides)
        if not pairs:
            continue
        function = _enclosing(program, call)
        dims = {id(arg): dim for arg, _, dim in strides}
        suspicious: dict[str, str] = {}
        for tensor, (low, high) in pairs.items():
            walked = _walked_dims(program, site, tensor, (low, high))
            crossed = [w for w, arg in zip(walked, (high, low), strict=True) if w is not None and w == dims[id(arg)]]
            agreed = [w for w, arg in zip(walked, (low, high), strict=True) if w is not None and w == dims[id(arg)]]
            if crossed and not agreed:
                suspicious[tensor] = f"`{tensor}`'s strides scale indices bounded by the other dimension's size"
                continue
            source, flipped = origin(program, function, _expression(tensor))
            if not agreed and source in transposed and not flipped and _position(low) < _position(high):
                suspicious[tensor] = f"the reference transposes `{tensor}`, passed as stored"
        chosen = sorted(pairs, key=lambda t: t not in suspicious)[:MAX_TENSORS]
        chosen = [t for t in pairs if t in chosen]
        for size in range(1, len(chosen) + 1):
            for subset in itertools.combinations(chosen, size):
                changes: list[tuple[ast.AST, str]] = []
                for tensor in subset:
                    low, high = pairs[tensor]
                    changes += [(low, program.code(high)), (high, program.code(low))]
                names = ", ".join(f"`{t}`" for t in subset)
                first = min((n for n, _ in changes), key=_position)
                cued = bool(suspicious) and set(subset) == set(suspicious)
                yield Edit(
                    "transposed-operands",
                    "wrong-stride",
                    getattr(first, "lineno", 0),
                    f"swap the stride pairs of {names} at the launch (line {call.lineno}): transposed operands",
                    program.replace_all(changes),
                    "; ".join(suspicious[t] for t in subset) if cued else "",
                    grounded=cued,
                )


def _expression(text: str) -> ast.expr:
    statement = syntax.parse(text).body[0]
    assert isinstance(statement, ast.Expr)
    return statement.value


def _size_arguments(program: Program, site: LaunchSite) -> list[ast.Name]:
    """A launch's arguments that are host sizes, once each, passed to parameters that are not `tl.constexpr` (block
    sizes are tuning, not the problem's dimensions)."""
    sizes = program.host_sizes()
    params = params_of(site.kernel)
    blocks = set(constexprs_of(site.kernel))
    passed = [*zip(params, site.call.args, strict=False), *((k.arg, k.value) for k in site.call.keywords)]
    seen: set[str] = set()
    found: list[ast.Name] = []
    for param, arg in passed:
        if param in blocks or not isinstance(arg, ast.Name) or arg.id not in sizes or arg.id in seen:
            continue
        seen.add(arg.id)
        found.append(arg)
    return found


_DOT_SHAPES = "must have equal reduction dimensions"
MAX_DOTS = 3
"""The `tl.dot` calls `dot-transpose` offers edits for when no error names one (two edits each)."""


@operator("dot-transpose", "wrong-stride")
def dot_transpose(program: Program) -> Iterator[Edit]:
    """Each `tl.dot(a, b)` with one operand transposed (`tl.trans(b)`, then `tl.trans(a)`): where the compiler's
    message says the reduction dimensions differ, the dot on the line it names (grounded); else the first few dots
    of the kernels, for operands loaded in the other order in square blocks (values wrong, nothing refused)."""
    dots = [
        node
        for node in program.parsed.kernel_nodes()
        if isinstance(node, ast.Call)
        and program.parsed.path_of(node.func) == "triton.language.dot"
        and len(node.args) >= 2
        and not any(_transposed(program, a) for a in node.args[:2])
    ]
    line = program.error_line() if _DOT_SHAPES in program.error[:2000] else None
    named = [d for d in dots if d.lineno <= (line or 0) <= (d.end_lineno or d.lineno)]
    for dot in named or dots[:MAX_DOTS]:
        for index, side in ((1, "second"), (0, "first")):
            operand = dot.args[index]
            yield Edit(
                "dot-transpose",
                "wrong-stride",
                dot.lineno,
                f"transpose the dot's {side} operand: `tl.trans({program.parsed.code(operand)})`",
                program.replace(operand, f"tl.trans({program.parsed.code(operand)})"),
                "the compiler says the dot's reduction dimensions differ" if named else "a dot of two loaded tiles",
                grounded=bool(named),
            )


def _transposed(program: Program, node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and program.parsed.path_of(node.func) in (
        "triton.language.trans",
        "triton.language.permute",
    )


@operator("size-swap", "wrong-normalizer")
def size_swap(program: Program) -> Iterator[Edit]:
    """At a launch, two size arguments exchanged (`M, N, K` passed where the kernel takes `N, M, K`)."""
    for site in program.parsed.launches:
        call = site.call
        if any(isinstance(a, ast.Starred) for a in call.args):
            continue
        for a, b in itertools.combinations(_size_arguments(program, site), 2):
            text = program.replace_all([(a, b.id), (b, a.id)])
            description = f"swap the sizes `{a.id}` and `{b.id}` at the launch (line {call.lineno})"
            yield Edit("size-swap", "wrong-normalizer", a.lineno, description, text)


def _unpacked_shape(node: ast.AST) -> list[ast.Name] | None:
    """The names of `M, K = x.shape` (or `x.size()`, `x.shape[-2:]`), `_` included; None for another statement."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)):
        return None
    value = node.value
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        value = value.value
    shape = (isinstance(value, ast.Attribute) and value.attr == "shape") or (
        isinstance(value, ast.Call) and call_name(value, last=True) == "size" and not value.args
    )
    elements = node.targets[0].elts
    if not shape or len(elements) < 2 or not all(isinstance(e, ast.Name) for e in elements):
        return None
    return [e for e in elements if isinstance(e, ast.Name)]


@operator("shape-unpack", "uninitialized-output")
def shape_unpack(program: Program) -> Iterator[Edit]:
    """On the host, two names of a shape unpacking exchanged (`K, M = A.shape` -> `M, K = A.shape`)."""
    for node in program.host_nodes():
        names = _unpacked_shape(node)
        if names is None:
            continue
        unpacked = ", ".join(n.id for n in names)
        for a, b in itertools.combinations(names, 2):
            if a.id == b.id:
                continue
            text = program.replace_all([(a, b.id), (b, a.id)])
            description = f"`{unpacked} = ...` with `{a.id}` and `{b.id}` exchanged"
            yield Edit("shape-unpack", "uninitialized-output", a.lineno, description, text)


def _axes_of(function: ast.AST) -> dict[str, list[str]]:
    """The tensors a host function unpacks whole (`C_in, C_out, kD, kH, kW = weight.shape`), by their text: the
    name of each axis, in order."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(function):
        names = _unpacked_shape(node)
        if names is None or not isinstance(node, ast.Assign) or isinstance(node.value, ast.Subscript):
            continue
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func  # `w.size()` as `w.shape`
        if isinstance(value, ast.Attribute):
            found[ast.unparse(value.value)] = [n.id for n in names]
    return found


@operator("reshape-axes", "wrong-stride")
def reshape_axes(program: Program) -> Iterator[Edit]:
    """A tensor whose axes the host named (`C_in, C_out, kD, kH, kW = weight.shape`) made a matrix whose one side
    is a single inner axis (`weight.reshape(K_total, C_out)`: a transposed convolution's weight flattened as if
    its output channels were last): the matrix's rows then mix that axis with the others. The axis moves to the
    side it names first (`weight.movedim(1, -1).reshape(K_total, C_out)`)."""
    functions = [n for n in ast.walk(program.tree) if isinstance(n, ast.FunctionDef)]
    kernels = {id(k) for k in program.kernels}
    for function in functions:
        if id(function) in kernels:
            continue
        rebound = {t.id for t in ast.walk(function) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
        axes = {tensor: names for tensor, names in _axes_of(function).items() if tensor not in rebound}
        if not axes:  # a tensor bound again (`x = x.permute(...)`) may have other axes where it is reshaped
            continue
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            if call.func.attr not in ("reshape", "view") or len(call.args) != 2 or call.keywords:
                continue
            tensor = ast.unparse(call.func.value)
            names = axes.get(tensor)
            if names is None or len(names) < 3:
                continue
            rows, cols = (ast.unparse(a) for a in call.args)
            for side, (size, other, edge) in enumerate(((cols, rows, len(names) - 1), (rows, cols, 0))):
                if size == "_" or size not in names or other in names or names.count(size) != 1:
                    continue
                axis = names.index(size)
                if axis == edge:
                    continue
                to = -1 if side == 0 else 0
                text = f"{tensor}.movedim({axis}, {to}).reshape({rows}, {cols})"
                yield Edit(
                    "reshape-axes",
                    "wrong-stride",
                    call.lineno,
                    f"`{ast.unparse(call)}` takes axis {axis} (`{size}`) as a side of the matrix: move it there "
                    f"first (`{text}`)",
                    program.replace(call, text),
                    "a matrix side that is one inner axis of the tensor reshaped",
                )


_SWAP = ".transpose(1, -1).contiguous()"
"""The layout `axis-swap` conjugates a wrapper by: the second dimension (channels) exchanged with the last."""


def _wrappers(program: Program) -> dict[str, ast.FunctionDef]:
    """The module's host functions that launch a kernel and return one value (not a tuple), by name."""
    names = {site.host.name for site in program.parsed.launches if site.host is not None}
    found: dict[str, ast.FunctionDef] = {}
    for node in program.tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name not in names:
            continue
        returned = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
        if returned and not any(isinstance(v, ast.Tuple) for v in returned):
            found[node.name] = node
    return found


@operator("axis-swap", "wrong-stride")
def axis_swap(program: Program) -> Iterator[Edit]:
    """A wrapper that normalises along the wrong axis, conjugated by the exchange of the channels and the last
    dimension: `f(x, ...)` -> `f(x.transpose(1, -1).contiguous(), ...).transpose(1, -1).contiguous()`. Offered
    where the reference normalises along an axis (`nn.LayerNorm`, `GroupNorm`, `BatchNorm`, a softmax) and the
    host calls a function of the module that launches a kernel, with a tensor first. Whatever the wrapper does
    with its second dimension (reduce it, move it last) it then does with the last, and the reverse. Grounded
    where the reference's LayerNorm follows a convolution: it normalises the output's last dimension, which a
    kernel written for the channels misses (`nn.LayerNorm(out_channels)` on `N, C, D, H, W`)."""
    norms = axis_norms(program.reference)
    if not norms:
        return
    wrappers = _wrappers(program)
    convolved = any(layer.kind == "conv" for layer in layers(program.reference))
    grounded = convolved and any(n.startswith(("layernorm", "layer_norm")) for n in norms)
    for node in program.host_nodes():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in wrappers):
            continue
        wrapper = wrappers[node.func.id]
        if wrapper.lineno <= node.lineno <= (wrapper.end_lineno or wrapper.lineno) or not node.args:
            continue
        first = node.args[0]
        if isinstance(first, ast.Starred):
            continue
        start, end = program.span(node)
        at, to = program.span(first)
        operand = program.code(first)
        if not isinstance(first, ast.Name | ast.Attribute | ast.Call | ast.Subscript):
            operand = f"({operand})"
        swapped = program.text[start:at] + operand + _SWAP + program.text[to:end] + _SWAP
        description = (
            f"`{node.func.id}({program.code(first)}, ...)` on the layout with the channels and the last dimension"
            " exchanged, and its output exchanged back: the axis it normalises"
        )
        cue = "the reference's LayerNorm normalises the last dimension of a convolution's output" if grounded else ""
        yield Edit("axis-swap", "wrong-stride", node.lineno, description, program.replace(node, swapped), cue, grounded)


# -- how the bench injects it (mutations) ----------------------------------------------------------


def _cst_stride(node: cst.BaseExpression) -> tuple[str, int] | None:
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "stride"
        and len(node.args) == 1
        and isinstance(node.args[0].value, cst.Integer)
    ):
        return cst.Module([]).code_for_node(node.func.value), int(node.args[0].value.value)
    return None


@mutation
class OperandsUntransposed(Mutation):
    name = "operands-untransposed"
    label = "wrong-stride"
    summary = (
        "a launch passes its transposed operands' strides as stored: A.stride(1), A.stride(0) -> A.stride(0), "
        "A.stride(1), for every such tensor at once"
    )
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Subscript)):
            return []
        args = list(node.args)
        changed = False
        for i in range(len(args) - 1):
            one, two = _cst_stride(args[i].value), _cst_stride(args[i + 1].value)
            if one is not None and two is not None and one[0] == two[0] and one[1] == two[1] + 1:
                args[i], args[i + 1] = (
                    args[i].with_changes(value=args[i + 1].value),
                    args[i + 1].with_changes(value=args[i].value),
                )
                changed = True
        return [node.with_changes(args=args)] if changed else []
