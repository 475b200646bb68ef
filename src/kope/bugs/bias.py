"""A layer's bias the kernel never adds: the reference's `nn.Linear` (or convolution) has one, the kernel's matrix
product goes straight into its epilogue.

Real models drop it in two ways: the kernel is given a bias pointer and never loads it, or `ModelNew` never makes
the bias at all (only `self.weight`). `layer-bias` (reference-guided: kope.bugs.reference.layers) adds, right after
the loop that accumulates a `tl.dot`, the bias loaded along the output's column index and broadcast over the rows
(or along the row index, for a tile whose rows are the output's features):

    acc += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]

The bias comes from a pointer parameter the kernel never reads, else from a new first parameter that every launch
passes: `self.<layer>.bias` where `ModelNew` keeps the layer, else a new `self.<layer>_bias` parameter of the
layer's output size (the evaluator copies the reference's bias into it by its shape), handed down through the
module-level function that launches the kernel (a new keyword parameter) where the launch is not in a method.

Two host-side kin, where `ModelNew`'s state is not the reference's: `layer-bias-flag` (a layer built `bias=False`
where the reference's is biased, often "handled in the fused kernel" that adds another bias) and `param-shape` (a
parameter made with a hard-coded shape, `torch.randn(1)` for the reference's `torch.randn(bias_shape)`, so the
reference's value is not the one the candidate runs with). And `param-transpose`: a weight `ModelNew` keeps as
(in, out) for the reference's `nn.Linear`, whose weight is (out, in); where the sizes are equal the layouts look alike
and the reference's weight is read transposed: made (out, in) and read `.t()`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from kope import syntax
from kope.bugs.analysis import names_in
from kope.bugs.edit import Edit, Program, assignments, feeding, memory_accesses, operator, params_of
from kope.bugs.reference import Layer, layers
from kope.source import call_name

_ACCUMULATES = ("tl.dot",)


@dataclass(frozen=True)
class _Site:
    """Where a kernel's matrix product is complete: its accumulator, the loop statement that builds it, and the
    statement list that loop sits in."""

    kernel: ast.FunctionDef
    accumulator: str
    loop: ast.For | ast.While


def _outer_product(node: ast.expr) -> bool:
    """`a[:, None] * b[None, :]`: a product of two vectors laid along different axes (a matrix product or a
    convolution accumulated by hand, one rank-1 update at a time)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return False
    slices = [ast.unparse(side.slice) for side in (node.left, node.right) if isinstance(side, ast.Subscript)]
    return sorted(slices) == ["(:, None)", "(None, :)"]


def _sites(kernel: ast.FunctionDef) -> Iterator[_Site]:
    """Each outermost loop of the kernel body that accumulates a `tl.dot` into a name (`acc += tl.dot(a, b)`,
    `acc = tl.dot(a, b, acc)`), or an outer product (`acc += x[:, None] * w[None, :]`)."""
    for statement in kernel.body:
        if not isinstance(statement, ast.For | ast.While):
            continue
        for node in ast.walk(statement):
            name = ""
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                calls = [c for c in ast.walk(node.value) if isinstance(c, ast.Call)]
                if any(call_name(c) in _ACCUMULATES for c in calls) or _outer_product(node.value):
                    name = node.target.id
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
                calls = [c for c in ast.walk(node.value) if isinstance(c, ast.Call) and call_name(c) in _ACCUMULATES]
                if any(target in {n.id for n in ast.walk(c) if isinstance(n, ast.Name)} for c in calls):
                    name = target
            if name:
                yield _Site(kernel, name, statement)
                break


def _axes(site: _Site) -> list[tuple[str, str]]:
    """The index names the kernel broadcasts as columns (`offs_n[None, :]`), then as rows (`offs_m[:, None]`), in
    the addresses of its stores after the loop (directly or through the names an address is built from), each with
    the broadcast that lays a vector along that axis."""
    end = site.loop.end_lineno or site.loop.lineno
    stores = [a for a in memory_accesses(site.kernel) if call_name(a).endswith("store") and a.lineno > end]
    exprs = [e for store in stores for e in feeding(site.kernel, store.args[0])]
    used = {n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)}
    bound = [
        node.value
        for node in ast.walk(site.kernel)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in used
        and isinstance(node.value, ast.Subscript)
    ]
    subscripts = [n for e in [*exprs, *bound] for n in ast.walk(e) if isinstance(n, ast.Subscript)]
    found: list[tuple[str, str]] = []
    for pattern in _BROADCASTS:
        for node in subscripts:
            if isinstance(node.value, ast.Name) and ast.unparse(node.slice) == pattern:
                entry = (node.value.id, f"[{pattern[1:-1]}]")
                if entry not in found:
                    found.append(entry)
    return found


_BROADCASTS = ("(None, :)", "(:, None)")


def _bound(kernel: ast.FunctionDef, index: str) -> str:
    """The size an index is compared with (`offs_n < N`, `offs_n[None, :] < N`); "" when none is."""
    for node in ast.walk(kernel):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt):
            left = node.left.value if isinstance(node.left, ast.Subscript) else node.left
            if isinstance(left, ast.Name) and left.id == index:
                return ast.unparse(node.comparators[0])
    return ""


def _unread_pointers(kernel: ast.FunctionDef) -> list[str]:
    """Parameters named like a bias that the kernel body never reads."""
    read = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return [p for p in params_of(kernel) if "bias" in p.lower() and p not in read]


def _loads_after(site: _Site) -> bool:
    end = site.loop.end_lineno or site.loop.lineno
    return any(call_name(a) == "tl.load" and a.lineno > end for a in memory_accesses(site.kernel))


def _kernel_biases(program: Program) -> int:
    """How many distinct bias tensors the kernels load: through a parameter named like a bias or passed a host
    tensor named so."""
    found: set[str] = set()
    for kernel in program.kernels:
        tensors = program.tensors(kernel)
        params = set(params_of(kernel))
        for access in memory_accesses(kernel):
            if call_name(access) != "tl.load":
                continue
            for node in (n for e in feeding(kernel, access.args[0]) for n in ast.walk(e)):
                if isinstance(node, ast.Name) and node.id in params:
                    host = tensors.get(node.id, "")
                    if "bias" in host.lower() or "bias" in node.id.lower():
                        found.add(host or node.id)
    return len(found)


def _reference_biases(reference: str, biased: list[Layer]) -> int:
    """The reference's biases: its layers' and the parameters it makes named like one (`self.bias = nn.Parameter`)."""
    try:
        tree = syntax.parse(reference)
    except (SyntaxError, ValueError, RecursionError):
        return len(biased)
    own = {
        ast.unparse(n.targets[0])
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and "bias" in ast.unparse(n.targets[0]).lower()
        and "Parameter(" in ast.unparse(n.value)
    }
    return len(biased) + len(own)


def _classes(program: Program) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in program.tree.body if isinstance(n, ast.ClassDef)}


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _self_attributes(init: ast.FunctionDef) -> dict[str, ast.expr]:
    """`self.name = value` in `__init__`, by name."""
    found: dict[str, ast.expr] = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                found.setdefault(target.attr, node.value)
    return found


def _module_bias(program: Program, layer: Layer) -> tuple[str, list[tuple[int, int, str]]] | None:
    """The expression that gives the layer's bias inside `ModelNew`'s methods, and the splices that make it:
    `self.<attr>.bias` of a kept layer; else a new zero parameter of the layer's output size."""
    model = _classes(program).get("ModelNew")
    init = _method(model, "__init__") if model else None
    if model is None or init is None:
        return None
    attributes = _self_attributes(init)
    for name, value in attributes.items():
        if isinstance(value, ast.Call):
            cls = call_name(value).split(".")[-1].lower()
            if (cls == "linear" and layer.kind == "linear") or (cls.startswith("conv") and layer.kind == "conv"):
                return f"self.{name}.bias", []
    params = [a.arg for a in init.args.args[1:]]
    renamed = dict(zip(layer.params, params, strict=False))
    try:
        out = ast.parse(layer.out, mode="eval")
    except SyntaxError:
        return None
    for node in ast.walk(out):
        if isinstance(node, ast.Name):
            if node.id not in renamed:
                return None
            node.id = renamed[node.id]
    name = f"{layer.attribute}_bias"
    while name in attributes:
        name += "_"
    anchor = max(
        (n for n in init.body if _makes_attribute(n) or _is_super_init(n)), key=lambda n: n.lineno, default=None
    )
    if anchor is None:
        return None
    indent = " " * anchor.col_offset
    at = program.span(anchor)[1]
    text = f"\n{indent}self.{name} = nn.Parameter(torch.zeros({ast.unparse(out)}))"
    return f"self.{name}", [(at, at, text)]


def _makes_attribute(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Attribute)
        and "Parameter(" in ast.unparse(node.value)
    )


def _is_super_init(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and "__init__" in ast.unparse(node.value) and "super" in ast.unparse(node.value)


def _functions(program: Program) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in program.tree.body if isinstance(n, ast.FunctionDef) and n not in program.kernels}


def _methods(program: Program) -> set[int]:
    model = _classes(program).get("ModelNew")
    return {id(n) for n in ast.walk(model) if isinstance(n, ast.FunctionDef)} if model else set()


def _owner(program: Program, node: ast.AST) -> ast.FunctionDef | None:
    """The innermost host function (a method or a module-level function) around a node."""
    found = None
    line = getattr(node, "lineno", 0)
    for fn in ast.walk(program.tree):
        if (
            isinstance(fn, ast.FunctionDef)
            and fn not in program.kernels
            and fn.lineno <= line <= (fn.end_lineno or fn.lineno)
            and (found is None or fn.lineno >= found.lineno)
        ):
            found = fn
    return found


def _threaded(
    program: Program, fn: ast.FunctionDef, value: str, param: str, depth: int = 2
) -> tuple[str, list[tuple[int, int, str]]] | None:
    """How the bias reaches code inside `fn`: `value` (a `self.` expression) in a method of `ModelNew`; in a
    module-level function, a new keyword parameter `param` that each of its calls passes (up to `depth` calls up)."""
    if id(fn) in _methods(program):
        return value, []
    if depth == 0 or fn.args.kwarg is not None or fn.name not in _functions(program):
        return None
    last = [*fn.args.posonlyargs, *fn.args.args, *([fn.args.vararg] if fn.args.vararg else []), *fn.args.kwonlyargs]
    if not last:
        return None
    nodes: list[ast.AST] = [*last, *fn.args.defaults, *[d for d in fn.args.kw_defaults if d is not None]]
    end = max(program.span(n)[1] for n in nodes)
    splices: list[tuple[int, int, str]] = [(end, end, f", {param}=None")]
    calls = [
        n
        for n in ast.walk(program.tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fn.name
    ]
    if not calls:
        return None
    for call in calls:
        caller = _owner(program, call)
        if caller is None:
            return None
        made = _threaded(program, caller, value, param, depth - 1)
        if made is None:
            return None
        expr, more = made
        splices += [*more, _appended(program, call, f"{param}={expr}")]
    return param, splices


def _appended(program: Program, call: ast.Call, keyword: str) -> tuple[int, int, str]:
    """The splice that passes one more keyword argument to a call: after its last argument (a trailing comma and
    the closing parenthesis on their own line are kept)."""
    given = [*call.args, *[k.value for k in call.keywords]]
    if not given:
        at = program.span(call)[1] - 1
        return at, at, keyword
    at = max(program.span(g)[1] for g in given)
    return at, at, f", {keyword}"


def _spliced(text: str, splices: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(set(splices), key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _pointer(program: Program, site: _Site, layer: Layer) -> tuple[str, list[tuple[int, int, str]], str] | None:
    """The kernel's name for the bias, the splices that provide it, and how: an unread bias parameter, else a new
    first parameter passed at every launch."""
    unread = _unread_pointers(site.kernel)
    if unread:
        return unread[0], [], f"the unread parameter `{unread[0]}`"
    launches = [s for s in program.parsed.launches if s.kernel is site.kernel]
    made = _module_bias(program, layer)
    if not launches or made is None:
        return None
    value, splices = made
    name = f"{layer.attribute}_bias_ptr"
    while name in params_of(site.kernel):
        name += "_"
    first = site.kernel.args.args[0] if site.kernel.args.args else None
    if first is None:
        return None
    at = program.span(first)[0]
    splices = [*splices, (at, at, f"{name}, ")]
    for launch in launches:
        owner = _owner(program, launch.call)
        threaded = _threaded(program, owner, value, name.removesuffix("_ptr")) if owner else None
        if threaded is None:
            return None
        expr, more = threaded
        splices += more
        if launch.call.args:
            at = program.span(launch.call.args[0])[0]
            splices.append((at, at, f"{expr}, "))
        else:
            splices.append(_appended(program, launch.call, f"{name}={expr}"))
    return name, splices, f"`{value}` passed as a new parameter `{name}`"


@operator("layer-bias", "wrong-constant")
def layer_bias(program: Program) -> Iterator[Edit]:
    """The reference's layer bias added to a kernel's matrix product right after its loop, broadcast along the
    output's columns (then its rows)."""
    biased = [layer for layer in layers(program.reference) if layer.bias] if program.reference else []
    if not biased or _kernel_biases(program) >= _reference_biases(program.reference, biased):  # all there
        return
    single: list[Edit] = []
    whole: dict[int, tuple[Edit, list[tuple[int, int, str]]]] = {}
    """Per kernel, its first site's edit along the columns, with the splices that make it."""
    for kernel in program.kernels:
        for site in _sites(kernel):
            made = _pointer(program, site, biased[0])
            if made is None:
                continue
            pointer, splices, how = made
            end = program.span(site.loop)[1]
            indent = " " * site.loop.col_offset
            cue = f"the reference's {biased[0].attribute} adds a bias the kernels never load" + (
                "; nothing is loaded after the product" if not _loads_after(site) else ""
            )
            for rank, (index, broadcast) in enumerate(_axes(site)):
                bound = _bound(kernel, index)
                lanes = _available(kernel, index, site.loop.end_lineno or site.loop.lineno)
                if lanes is None:
                    continue
                mask = f", mask={lanes} < {bound}, other=0.0" if bound else ""
                line = f"\n{indent}{site.accumulator} += tl.load({pointer} + {lanes}{mask}){broadcast}"
                edit = Edit(
                    "layer-bias",
                    "wrong-constant",
                    site.loop.end_lineno or site.loop.lineno,
                    f"the {biased[0].attribute} bias ({how}) added to `{site.accumulator}` along `{index}`",
                    _spliced(program.text, [*splices, (end, end, line)]),
                    cue if rank == 0 else "",
                )
                single.append(edit)
                if rank == 0:
                    whole.setdefault(id(kernel), (edit, [*splices, (end, end, line)]))
    yield from _in_every_kernel(program, list(whole.values()))
    yield from single


def _in_every_kernel(program: Program, chosen: list[tuple[Edit, list[tuple[int, int, str]]]]) -> Iterator[Edit]:
    """The bias added in every kernel that takes it, at once (before the edits of one kernel each): kernels launched
    on other branches of the host code (a small-size kernel and a large-size one) each compute the layer, and the
    derived cases may run only one of them, so a version that mends one alone can look right there."""
    if len(chosen) < 2:
        return
    yield Edit(
        "layer-bias",
        "wrong-constant",
        chosen[0][0].line,
        f"{chosen[0][0].description} (and in each of the {len(chosen)} kernels that compute it)",
        _spliced(program.text, [s for _, splices in chosen for s in splices]),
        chosen[0][0].cue,
    )


def _available(kernel: ast.FunctionDef, index: str, line: int) -> str | None:
    """`index` as code usable after `line`: its name where it is a parameter or is assigned by then, else the value
    of its one later assignment (`(pid_n * BLOCK_N + tl.arange(0, BLOCK_N))`, a store's index built after the loop)
    where every name that value reads is; None otherwise."""
    made = assignments(kernel).get(index, [])
    if index in params_of(kernel) or any(a.lineno <= line for a in made):
        return index
    if len(made) != 1:
        return None
    needed = names_in(made[0].value)
    ready = set(params_of(kernel)) | {n for n, a in assignments(kernel).items() if any(x.lineno <= line for x in a)}
    return f"({ast.unparse(made[0].value)})" if needed <= ready | {"tl", "triton"} else None


def _reference_init(reference: str) -> ast.FunctionDef | None:
    try:
        tree = syntax.parse(reference)
    except (SyntaxError, ValueError, RecursionError):
        return None
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    return _method(model, "__init__") if model else None


def _candidate_model(program: Program) -> tuple[ast.FunctionDef | None, ast.FunctionDef | None]:
    model = _classes(program).get("ModelNew")
    if model is None:
        return None, None
    return _method(model, "__init__"), _method(model, "forward")


def _calls_module(forward: ast.FunctionDef | None, attribute: str) -> bool:
    """Whether `forward` runs the layer itself (`self.conv(x)`)."""
    return forward is not None and any(
        isinstance(n, ast.Call) and ast.unparse(n.func) == f"self.{attribute}" for n in ast.walk(forward)
    )


@operator("layer-bias-flag", "wrong-constant")
def layer_bias_flag(program: Program) -> Iterator[Edit]:
    """A layer `ModelNew` builds with `bias=False` where the reference's layer of that attribute (or kind) has a bias:
    the flag dropped. Grounded where `forward` runs the layer itself: its output then lacks the reference's bias."""
    biased = [layer for layer in layers(program.reference) if layer.bias]
    init, forward = _candidate_model(program)
    if not biased or init is None:
        return
    for name, value in _self_attributes(init).items():
        if not isinstance(value, ast.Call):
            continue
        cls = call_name(value).split(".")[-1].lower()
        kind = "linear" if cls == "linear" else "conv" if cls.startswith("conv") else ""
        layer = next((x for x in biased if x.attribute == name), None) or next(
            (x for x in biased if x.kind == kind), None
        )
        flag = next((k for k in value.keywords if k.arg == "bias"), None)
        if layer is None or flag is None or not (isinstance(flag.value, ast.Constant) and flag.value.value is False):
            continue
        grounded = _calls_module(forward, name)
        yield Edit(
            "layer-bias-flag",
            "wrong-constant",
            flag.value.lineno,
            f"`self.{name}` built with its bias, as the reference's `{layer.attribute}`",
            program.replace(flag.value, "True"),
            cue=f"the reference's `{layer.attribute}` has a bias; `ModelNew` builds its layer without one",
            grounded=grounded,
        )


def _parameters(init: ast.FunctionDef) -> dict[str, ast.Call]:
    """`self.name = nn.Parameter(<creator>(<shape>...))` in `__init__`: the creator call, by attribute."""
    found: dict[str, ast.Call] = {}
    for name, value in _self_attributes(init).items():
        if isinstance(value, ast.Call) and call_name(value).split(".")[-1] == "Parameter" and value.args:
            inner = value.args[0]
            if isinstance(inner, ast.Call) and inner.args:
                found[name] = inner
    return found


@operator("param-shape", "broadcast-error")
def param_shape(program: Program) -> Iterator[Edit]:
    """A parameter `ModelNew` makes under the reference's attribute name with other shape arguments
    (`nn.Parameter(torch.randn(1))` for the reference's `nn.Parameter(torch.randn(bias_shape))`): the reference's
    shape arguments, its `__init__` parameters renamed to `ModelNew`'s. The reference's values then are the ones
    the candidate runs with (kope copies a parameter by name and shape). Grounded where the candidate's shape is
    literals only and the reference's is made from what `__init__` is given: a hard-coded shape."""
    ref_init = _reference_init(program.reference)
    init, _ = _candidate_model(program)
    if ref_init is None or init is None:
        return
    ref_params = [a.arg for a in ref_init.args.args[1:]]
    renamed = dict(zip(ref_params, [a.arg for a in init.args.args[1:]], strict=False))
    own = _parameters(init)
    for name, ref_call in _parameters(ref_init).items():
        call = own.get(name)
        if call is None:
            continue
        shape = [ast.parse(ast.unparse(a), mode="eval").body for a in ref_call.args]
        names = {n.id for a in shape for n in ast.walk(a) if isinstance(n, ast.Name)}
        if not names <= set(renamed):
            continue
        for a in shape:
            for n in ast.walk(a):
                if isinstance(n, ast.Name):
                    n.id = renamed[n.id]
        text = ", ".join(ast.unparse(a) for a in shape)
        if text == ", ".join(ast.unparse(a) for a in call.args):
            continue
        start, _ = program.span(call.args[0])
        _, end = program.span(call.args[-1])
        source = program.text[:start] + text + program.text[end:]
        nodes = [n for a in call.args for n in ast.walk(a)]
        literal = all(isinstance(n, ast.Constant | ast.Tuple | ast.expr_context) for n in nodes)
        yield Edit(
            "param-shape",
            "broadcast-error",
            call.lineno,
            f"`self.{name}` made with the reference's shape `{text}`",
            source,
            cue=f"the reference's `self.{name}` has the shape `{ast.unparse(ref_call.args[0])}`",
            grounded=literal and bool(names),
        )


def _shape_args(call: ast.Call) -> list[ast.expr]:
    """A creator's shape arguments: `torch.empty(a, b)` or `torch.empty((a, b))`."""
    if len(call.args) == 1 and isinstance(call.args[0], ast.Tuple | ast.List):
        return list(call.args[0].elts)
    return [a for a in call.args if not isinstance(a, ast.Starred)]


@operator("param-transpose", "broadcast-error")
def param_transpose(program: Program) -> Iterator[Edit]:
    """A 2-D parameter `ModelNew` lays out (in, out) for the reference's `nn.Linear(in, out)`, whose weight is
    (out, in) (`nn.Parameter(torch.empty(in_features, out_features))`, read as `x @ self.weight`). Where the two
    sizes are equal nothing tells the layouts apart: the reference's weight (copied by shape, or drawn from the
    same seed) is read transposed. The parameter is made (out, in) and each read of it in `ModelNew`'s other
    methods becomes `self.<name>.t()`: the candidate computes as before, on the reference's layout. Grounded where
    the task makes the two sizes equal."""
    init, _ = _candidate_model(program)
    model = _classes(program).get("ModelNew")
    if init is None or model is None:
        return
    own = [a.arg for a in init.args.args[1:]]
    for layer in layers(program.reference):
        if layer.kind != "linear" or not layer.inp:
            continue
        renamed = dict(zip(layer.params, own, strict=False))
        sides = []
        for text in (layer.inp, layer.out):
            try:
                node = ast.parse(text, mode="eval").body
            except SyntaxError:
                break
            for n in ast.walk(node):
                if isinstance(n, ast.Name):
                    n.id = renamed.get(n.id, n.id)
            sides.append(ast.unparse(node))
        if len(sides) != 2 or sides[0] == sides[1]:
            continue
        for name, call in _parameters(init).items():
            shape = _shape_args(call)
            if len(shape) != 2 or [ast.unparse(a).removeprefix("self.") for a in shape] != sides:
                continue
            reads = [
                n
                for method in model.body
                if isinstance(method, ast.FunctionDef) and method is not init
                for n in ast.walk(method)
                if isinstance(n, ast.Attribute)
                and isinstance(n.ctx, ast.Load)
                and n.attr == name
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
            ]
            if not reads:
                continue
            first, second = shape
            splices = [(*program.span(first), program.code(second)), (*program.span(second), program.code(first))]
            splices += [(*program.span(n), f"self.{name}.t()") for n in reads]
            yield Edit(
                "param-transpose",
                "broadcast-error",
                call.lineno,
                f"`self.{name}` laid out as the reference's `{layer.attribute}.weight` (out, in), read as `.t()`",
                _spliced(program.text, splices),
                cue=f"`self.{name}` is ({sides[0]}, {sides[1]}); the reference's `nn.Linear` weight is (out, in)",
                grounded=layer.square,
            )
