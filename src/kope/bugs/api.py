"""Triton API misuse: the kernel never runs, though what it would compute may be right.

Real models' discards often stop before their first value, on a rule of Triton's that the compiler or the launcher
states plainly. This kind repairs the ones whose fix the source itself determines (each edit is `grounded`: the
rule is broken on every input, so the search tries these first):

- `constexpr-param`: a parameter used where Triton needs a compile-time constant (a `tl.arange` bound, a shape of
  `tl.zeros` / `tl.full` / `tl.reshape`, a `tl.static_range` bound) is not annotated `tl.constexpr`
  ("arange's arguments must be of type tl.constexpr"). The edit annotates it.
- `constexpr-local`: a name the kernel computes from its `tl.constexpr` parameters (`BLOCK2 = BLOCK * 2`, with
  `min` / `max`) and uses where Triton needs a constant: Triton's compiler takes it for a runtime value ("arange's
  arguments must be of type tl.constexpr"; the interpreter runs it). The edit annotates it
  (`BLOCK2: tl.constexpr = BLOCK * 2`) and the names it is computed from.
- `arange-block`: `tl.arange(0, N)` over a size the host passes (a tensor's size, not a block size; or, for a
  parameter not annotated `tl.constexpr`, anything not a power of two by construction, such as a window's size):
  Triton wants a power of two there, so the kernel fails on every other size. The edit ranges over a new block
  `N_BLOCK: tl.constexpr` that each launch passes as `triton.next_power_of_2(<the size>)`, and `N` stays the
  runtime size the masks compare with.
- `autotune-keyword`: a launch passes a meta-parameter that the kernel's `@triton.autotune` configs (or its
  `@triton.heuristics`) already set ("got multiple values for keyword argument 'BLOCK_SIZE'"). Two edits: the
  launch stops passing it, or the kernel stops being autotuned (the launch's value is used).
- `missing-function`: a `tl.` function Triton does not have (`tl.tanh`, `tl.log1p`, `tl.expm1`, `tl.any`,
  `tl.all`, `tl.relu`, `tl.gelu`, `tl.softplus`, `tl.floor_divide`, `tl.pow`, ...: "module 'triton.language' has
  no attribute 'tanh'"), written with the ones it has (`2 * tl.sigmoid(2 * x) - 1`, `tl.max(tl.where(m, 1, 0)) > 0`,
  `a // b`, `tl.extra.libdevice.pow(a, b)`).
- `hint-keyword`: a memory hint Triton cannot read: `cache_modifier=` / `eviction_policy=` given an attribute its
  language lacks (`tl.CacheModifier.CG`: "module 'triton.language' has no attribute 'CacheModifier'") or a string it
  does not accept (`".lu"`). A hint never changes a value: the edit drops it.
- `dtype-call`: a dtype called as a function (`tl.float32(n)`: "'dtype' object is not callable"), or given as the
  shape of `tl.view` / `tl.reshape` (`tl.view(s, tl.float32)`: "Shape element 0 must have type `constexpr[int]`"),
  written as the cast it means (`tl.cast(n, tl.float32)`).
- `grid-tuple`: a launch grid that is a number (`kernel[n_blocks](...)`: "object of type 'int' has no len()"),
  made the one-axis tuple Triton takes (`kernel[(n_blocks,)](...)`).
- `missing-import`: a module the file uses under its conventional name (`math`, `triton`, `tl`, `torch`, `F`,
  `nn`, `np`) that it never imports or binds ("name 'math' is not defined"). The edit imports it.
- `task-global`: a constant of the task's module (`batch_size`) that the file reads as a global and never binds, as
  the reference's own `__init__` may ("name 'batch_size' is not defined"). The edit binds it as the task does.
- `capped-block`: a block a `tl.arange` ranges over that the host caps by a size (`BLOCK = min(64, batch)`): a
  power of two while the size is large, any number below it ("arange's range must be a power of 2"). Every such
  cap becomes `min(64, triton.next_power_of_2(batch))`.
- `helper-jit`: a module-level function a kernel calls, computing with `triton.language` (and nothing of PyTorch),
  defined without `@triton.jit`: the interpreter runs it, Triton's GPU compiler refuses it ("Cannot access global
  variable ... from within @jit'ed function", "Did you forget to add @triton.jit ?"; kope's evaluation lowers each
  launch with that compiler's front end). The edit decorates every such helper, the way the file spells
  `triton.jit`.
- `nested-jit`: a function defined inside a kernel (`def load_u(r, c): ...` in its body: "StopIteration" from
  Triton's compiler) moved out before the kernel as a `@triton.jit` function; the kernel's names it reads become its
  parameters, passed at each call.
- `skip-continue`: `if C: continue` (or `if C: break`) in a kernel's loop ("unsupported AST node type:
  Continue"), in the loop's body or in an `if` that ends it: the rest of its block goes under `if not (C):` (for
  `break`, in the body only, the same where C stays true once true, as a bound on a rising index does).
- `block-index`: a block indexed by a scalar (`vals[i]`, `acc[:, j]`, `vals[i] = v`, with `i` a loop index, a
  literal or a program id): the interpreter runs it (its blocks are NumPy arrays), Triton's GPU compiler refuses it
  ("unsupported tensor index"). A read becomes the masked sum that picks the element
  (`tl.sum(tl.where(tl.arange(0, vals.shape[0]) == i, vals, 0), axis=0).to(vals.dtype)`), a write the `tl.where`
  that replaces it.
- `block-slice`: a range sliced out of a block (`offs[i:i + VEC]`, `mask[0:1]`; the width stated by the slice):
  "unsupported tensor index: slice" on a GPU. The read becomes a one-hot gather of the same lanes
  (`tl.sum(tl.where(tl.arange(0, offs.shape[0])[None, :] == (i + tl.arange(0, VEC))[:, None], offs[None, :], 0),
  axis=1)`).
- `flatten-ravel`: a block flattened the way PyTorch does it (`x.flatten()`, `tl.reshape(x, (-1,))`,
  `x.view(-1)`: "'tensor' object has no attribute 'flatten'", "Shape element 0 must be a power of 2"), written
  `tl.ravel(x)`.
- `scalar-tensor`: a number passed to a kernel as a 0-d tensor (`torch.tensor(alpha, device=x.device)`) where the
  kernel computes with it as a scalar, never loads from it: Triton passes a tensor as a pointer ("invalid operands
  of type pointer<fp32> and triton.language.float32"). The launch passes `.item()` of it.
- `autotune-wrapper`: `@triton.autotune(...)` on a plain function whose body only launches a kernel
  (`def tuned(grid, **kw): return kernel[grid](**kw)`, then `tuned[grid](...)`: "'function' object has no attribute
  'arg_names'"): the autotune wraps the kernel itself (`tuned = triton.autotune(...)(kernel)`); on a plain function
  that does more than launch, the decorator goes (its launches pass their own values).
- `config-dict`: an autotune's configs written as dicts (`{"BLOCK_M": 64, "num_warps": 4}`: "'dict' object has no
  attribute 'kwargs'"): each becomes `triton.Config({"BLOCK_M": 64}, num_warps=4)`.
- `carried-type`: a variable a loop (or a branch) gives another type than it starts with ("Loop-carried variable acc
  has initial type int32 but is re-assigned to <['128'], fp32> in loop"): read from the evaluation's error
  (`Program.error`), the initial value made that type (`tl.full((BLOCK,), 0, tl.float32)`).
- `data-ptr`: `t.data_ptr()` passed to a kernel, an int64 Triton cannot load from ("Unsupported ptr type"): `t`.
- `axis-required`: a reduction called without the `axis` the installed Triton requires (`tl.reduce_or(m)`):
  `axis=None`.
- `store-lane`: a block of one stored through one address ("Value argument cannot be block type if pointer argument
  is not a block"): the address becomes a block of one lane.
- `host-cast`: Python's `float(x)` / `int(x)` over a runtime value in a kernel: `tl.cast(x, tl.float32)`; a scalar
  parameter's `n.to(tl.float32)`, where an argument of 1 (a constant to Triton) has no `.to`: `tl.cast(n, tl.float32)`.
- `unset-block`: a block size no launch, default or autotune config gives ("missing 1 required positional
  argument: 'BLOCK_SIZE'"): the launch passes a power of two.
- `grid-arity`: a launch grid that is a function of more than the meta-parameters (`def grid(meta, M, N)`: "grid()
  missing 2 required positional arguments"): the launch calls it with its own arguments of those names.
- `grid-axes`: a launch grid of four axes or more, read with `tl.program_id(3)` ("program_id axis must be 0, 1, or 2
  but got 3"): axes 3.. folded into axis 0, each id recovered in the kernel from counts written in its parameters.
- `arange-loop`: a kernel's loop over a block's lanes (`for c in tl.arange(0, n):`: "Only `range` and
  `static_range` iterators are currently supported"): `range(0, n)`.
- `register-clash`: `self.bias = bias` (a flag), then `self.register_parameter("bias", None)` ("attribute 'bias'
  already exists"): the plain assignment goes.
- `unknown-keyword`: a keyword argument its callee does not take, named by the error ("Config.__init__() got an
  unexpected keyword argument 'num_consumer_groups'", `tl.zeros(..., scope="shared")`): dropped from that callee's
  calls.
- `keyword-spelling`: NumPy's keyword names on Triton's reductions (`keepdims=`, `dim=`), renamed Triton's way.
- `hint-call`: a compiler hint Triton refuses where it stands (`tl.multiple_of(ptrs, 16)` over a 2-D block), made its
  argument; a statement calling a `tl.` function Triton lacks, its value unread (`tl.assume_aligned(p, 128)`),
  dropped.
- `null-pointer`: a pointer parameter tested against null (`if b_ptr != 0:`, `tl.pointer_is_null(b_ptr)`: "invalid
  operands of type pointer<fp32> and triton.language.int32") where the launch passes `0` for a missing tensor: the
  test `b_ptr is not None`, the launch's `0` `None` (Triton specializes it).
- `host-jit-call`: a device function called in host code (`tl.cdiv(M, BLOCK)`: "Cannot call @triton.jit'd outside
  of the scope of a kernel"): its host form, `triton.cdiv(M, BLOCK)`.
- `api-together`: every rule above that a kernel breaks, mended in one version (beside each edit alone).

Its mutation, `constexpr-dropped`, removes the `tl.constexpr` annotation of a block a `tl.arange` ranges over.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from collections.abc import Iterator

import libcst as cst

from kope.bugs.analysis import Dataflow, Kernel, constexprs_of, host_assignments, launch_grid, params_of
from kope.bugs.cue import Source, cue
from kope.bugs.edit import OPERATORS, Edit, Program, autotune_configs, edits, operator, pointers_of, site_arguments
from kope.bugs.mutation import Context, Mutation, mutation
from kope.bugs.recipe import recipe
from kope.bugs.reference import task_constants
from kope.source import LaunchSite, call_name

_SHAPE_CALLS = {"zeros": (0,), "full": (0,), "reshape": (1,), "view": (1,), "broadcast_to": (1,)}
"""`tl.<name>` calls whose argument at these positions (or `shape=`) is a block shape: compile-time constants."""

_RANGES = ("static_range",)

_IMPORTS = {
    "math": "import math",
    "triton": "import triton",
    "tl": "import triton.language as tl",
    "torch": "import torch",
    "F": "import torch.nn.functional as F",
    "nn": "import torch.nn as nn",
    "np": "import numpy as np",
}
"""Conventional names and the import that binds each."""


# -- compile-time constants ---------------------------------------------------------------------


def _constant_positions(kernel: ast.FunctionDef) -> Iterator[tuple[ast.Call, ast.expr]]:
    """Each argument of a call in the kernel that Triton evaluates at compile time, with its call: `tl.arange`'s
    bounds, the block shapes of `tl.zeros`, `tl.full`, `tl.reshape`, `tl.view`, `tl.broadcast_to`, the bounds of
    `tl.static_range`."""
    for node in ast.walk(kernel):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node, last=True)
        if not call_name(node).startswith(("tl.", "triton.language.")):
            continue
        if name == "arange" or name in _RANGES:
            yield from ((node, a) for a in node.args)
            continue
        positions = _SHAPE_CALLS.get(name)
        if positions is None:
            continue
        shapes = [node.args[i] for i in positions if i < len(node.args)]
        shapes += [k.value for k in node.keywords if k.arg == "shape"]
        for shape in shapes:
            elements = shape.elts if isinstance(shape, ast.Tuple | ast.List) else [shape]
            yield from ((node, e) for e in elements)


def _derived(kernel: ast.FunctionDef) -> dict[str, set[str]]:
    """Names assigned in the kernel -> the parameters their value is computed from (transitively)."""
    params = set(params_of(kernel))
    found: dict[str, set[str]] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            if any(isinstance(c, ast.Call) for c in ast.walk(node.value)):
                continue  # a call's result (a load, a program id) is not a compile-time constant
            roots = {n for n in names if n in params}
            for name in names - params:
                roots |= found.get(name, set())
            found.setdefault(node.targets[0].id, set()).update(roots)
    return found


def runtime_constants(kernel: ast.FunctionDef) -> list[str]:
    """The parameters, not annotated `tl.constexpr`, that a compile-time position of the kernel reads (directly or
    through names computed from them), in parameter order."""
    constexprs = set(constexprs_of(kernel))
    params = [p for p in params_of(kernel) if p not in constexprs]
    derived = _derived(kernel)
    used: set[str] = set()
    for _, arg in _constant_positions(kernel):
        for node in ast.walk(arg):
            if isinstance(node, ast.Name):
                used.add(node.id)
                used |= derived.get(node.id, set())
    return [p for p in params if p in used]


@cue("runtime-constexpr", "a kernel parameter is used as a tl.arange bound or a block shape but is not tl.constexpr")
def runtime_constexpr(source: Source) -> Iterator[ast.AST]:
    for kernel in source.kernels:
        names = set(runtime_constants(kernel))
        yield from (a for a in kernel.args.args if a.arg in names)


def _annotated(program: Program, kernel: ast.FunctionDef, names: set[str]) -> str:
    """The source with these parameters of the kernel annotated `: tl.constexpr` (a default is kept)."""
    text = program.text
    spans = sorted((program.parsed.span(a), a.arg) for a in kernel.args.args if a.arg in names)
    for (start, end), name in reversed(spans):
        text = text[:start] + f"{name}: tl.constexpr" + text[end:]
    return text


@operator("constexpr-param", "api-misuse")
def constexpr_param(program: Program) -> Iterator[Edit]:
    """Annotate `tl.constexpr` the parameters a compile-time position reads (all of a kernel's at once)."""
    for kernel in program.parsed.kernels:
        names = runtime_constants(kernel)
        if not names:
            continue
        listed = ", ".join(names)
        yield Edit(
            "constexpr-param",
            "api-misuse",
            kernel.lineno,
            f"annotate {listed} of `{kernel.name}` as `tl.constexpr`: Triton needs a compile-time constant there",
            _annotated(program, kernel, set(names)),
            f"`{listed}` bounds a tl.arange or a block shape but is a runtime parameter",
            grounded=True,
        )


# -- arange over a size -------------------------------------------------------------------------


def _constant_expression(expr: ast.expr, known: set[str]) -> bool:
    """Arithmetic of numbers and the names in `known` (with `min` / `max`): a compile-time constant in Triton."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in ("min", "max")):
            return False
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Lambda | ast.NamedExpr):
            return False
        if isinstance(node, ast.Name) and node.id not in known and node.id not in ("min", "max"):
            return False
    return True


def constant_locals(kernel: ast.FunctionDef) -> dict[str, ast.Assign]:
    """Names the kernel assigns once, from arithmetic of its `tl.constexpr` parameters, numbers and other such names:
    constants to Python, runtime values to Triton's compiler unless annotated `tl.constexpr`."""
    bindings: dict[str, list[ast.Assign | None]] = {}

    def rebound(target: ast.AST) -> None:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                bindings.setdefault(name.id, []).append(None)

    for node in ast.walk(kernel):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bindings.setdefault(node.targets[0].id, []).append(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                rebound(target)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.comprehension):
            rebound(node.target)
    known = set(constexprs_of(kernel))
    found: dict[str, ast.Assign] = {}
    grew = True
    while grew:
        grew = False
        for name, nodes in bindings.items():
            (only,) = nodes if len(nodes) == 1 else (None,)
            if name not in found and only is not None and _constant_expression(only.value, known | set(found)):
                found[name] = only
                grew = True
    return found


@operator("constexpr-local", "api-misuse")
def constexpr_local(program: Program) -> Iterator[Edit]:
    """A name the kernel computes from its `tl.constexpr` parameters (`BLOCK2 = BLOCK * 2`) and uses where Triton needs
    a constant ("arange's arguments must be of type tl.constexpr"): annotated `BLOCK2: tl.constexpr = BLOCK * 2`, with
    the names it is computed from (every kernel's at once)."""
    changes: list[tuple[ast.AST, str]] = []
    for kernel in program.parsed.kernels:
        constant = constant_locals(kernel)
        wanted = {n.id for _, a in _constant_positions(kernel) for n in ast.walk(a) if isinstance(n, ast.Name)}
        wanted &= set(constant)
        pending = list(wanted)
        while pending:  # and the constant names those are computed from
            for node in ast.walk(constant[pending.pop()].value):
                if isinstance(node, ast.Name) and node.id in constant and node.id not in wanted:
                    wanted.add(node.id)
                    pending.append(node.id)
        changes += [(constant[n].targets[0], f"{n}: tl.constexpr") for n in sorted(wanted)]
    if changes:
        names = ", ".join(f"`{program.parsed.code(node)}`" for node, _ in changes)
        yield from _rewrite(
            program,
            "constexpr-local",
            changes,
            f"annotate {names} `tl.constexpr`: computed from constants, used where Triton needs one",
            "a name computed from tl.constexpr parameters used as a tl.arange bound or a block shape",
        )


def _power_of_two(expr: ast.expr) -> bool:
    """Whether a launch argument is a power of two by construction (`triton.next_power_of_2(...)`, a literal)."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value > 0 and expr.value & (expr.value - 1) == 0
    return isinstance(expr, ast.Call) and "power_of_2" in call_name(expr)


def _size_like(expr: ast.expr, site: LaunchSite) -> bool:
    """A launch argument that is a tensor's size: `x.shape[i]`, `x.size(i)`, `x.numel()`, or a name the host
    bound to one (`M, K = a.shape`); not a literal, not a power of two by construction."""
    if isinstance(expr, ast.Name):
        bound = host_assignments(site.host, expr.id, before=site.call.lineno, unpacked=True)
        if not bound:
            return False  # a parameter of the host function: could be anything
        expr = bound[-1]
    if _power_of_two(expr) or isinstance(expr, ast.Constant):
        return False
    text = ast.unparse(expr)
    return ".shape" in text or ".size(" in text or ".numel(" in text


def _arange_sizes(program: Program, kernel: ast.FunctionDef) -> list[str]:
    """Parameters a `tl.arange(0, P)` ranges over directly, that every launch passes a size (not a block)."""
    tune = program.parsed.autotune(kernel)
    tuned = _tuned_keys(tune, program) if tune is not None else set()
    params = set(params_of(kernel))
    found: list[str] = []
    for node in ast.walk(kernel):
        if isinstance(node, ast.Call) and call_name(node, last=True) == "arange" and len(node.args) == 2:
            bound = node.args[1]
            if isinstance(bound, ast.Name) and bound.id in params and bound.id not in tuned and bound.id not in found:
                found.append(bound.id)
    sites = [s for s in program.parsed.launches if s.kernel is kernel]
    names = params_of(kernel)
    runtime = set(names) - set(constexprs_of(kernel))
    sized = []
    for param in found:
        values = [(_argument(s.call, names, names.index(param), param), s) for s in sites]
        if values and all(
            v is not None and (_size_like(v, s) or _not_power_of_two(v, s, param in runtime)) for v, s in values
        ):
            sized.append(param)
    return sized


def _not_power_of_two(expr: ast.expr, site: LaunchSite, runtime: bool) -> bool:
    """A launch argument for a runtime parameter a `tl.arange` ranges over (every GPU compile refuses it) that is
    not a power of two by construction: a window's size (`self.kernel_size`), a host function's parameter."""
    if not runtime or _power_of_two(expr) or isinstance(expr, ast.Constant):
        return False
    if isinstance(expr, ast.Name):
        bound = host_assignments(site.host, expr.id, before=site.call.lineno)
        return not any(_power_of_two(b) or isinstance(b, ast.Constant) for b in bound)
    return True


@operator("arange-block", "api-misuse")
def arange_block(program: Program) -> Iterator[Edit]:
    """`tl.arange(0, N)` over a size -> `tl.arange(0, N_BLOCK)`, `N_BLOCK = triton.next_power_of_2(N)` at every
    launch; `N` stays a runtime parameter (the masks' bound). A kernel with several such sizes gets one edit for all
    of them first (each alone leaves the kernel failing on the others), then one for each."""
    for kernel in program.parsed.kernels:
        if not any(s.kernel is kernel for s in program.parsed.launches):
            continue
        sizes = _arange_sizes(program, kernel)
        for chosen in ([sizes] if len(sizes) > 1 else []) + [[size] for size in sizes]:
            edited, blocks = _with_blocks(program, kernel.name, chosen)
            if edited is None:
                continue
            named = ", ".join(f"`{b}` = next_power_of_2({n})" for n, b in zip(chosen, blocks, strict=True))
            yield Edit(
                "arange-block",
                "api-misuse",
                kernel.lineno,
                f"range over power-of-two blocks, not over the sizes: {named}",
                edited,
                f"`tl.arange(0, {chosen[0]})` over a size the host passes: Triton needs a power of two",
                grounded=True,
            )


def _with_blocks(program: Program, name: str, sizes: list[str]) -> tuple[str | None, list[str]]:
    """The source with each size's `arange_block` edit made, one after another (each on the last one's text)."""
    current: Program | None = program
    blocks: list[str] = []
    for size in sizes:
        kernel = current.parsed.kernel_names.get(name) if current is not None else None
        if current is None or kernel is None:
            return None, blocks
        sites = [s for s in current.parsed.launches if s.kernel is kernel]
        taken = {n.id for n in ast.walk(current.parsed.tree) if isinstance(n, ast.Name)} | set(params_of(kernel))
        block = f"{size}_BLOCK"
        while block in taken:
            block += "_"
        edited = _with_block(current, kernel, sites, size, block)
        if edited is None:
            return None, blocks
        blocks.append(block)
        current = Program.parse(edited)
    return (current.text if current is not None else None), blocks


def _pow2_literal(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and node.value > 0
        and node.value & (node.value - 1) == 0
    )


@operator("capped-block", "api-misuse")
def capped_block(program: Program) -> Iterator[Edit]:
    """Each host `BLOCK = min(64, size)` whose name a launch passes where the kernel ranges over it (`tl.arange(0,
    BLOCK)`) -> `min(64, triton.next_power_of_2(size))`: all of them in one edit (a kernel tiled on two axes caps
    both)."""
    caps: dict[int, ast.Call] = {}
    for site in program.parsed.launches:
        ranged = {
            n.id
            for call in ast.walk(site.kernel)
            if isinstance(call, ast.Call) and call_name(call) == "tl.arange"
            for n in ast.walk(call)
            if isinstance(n, ast.Name) and n.id in constexprs_of(site.kernel)
        }
        for keyword in site.call.keywords:
            if keyword.arg not in ranged or not isinstance(keyword.value, ast.Name):
                continue
            for value in host_assignments(site.host, keyword.value.id, before=site.call.lineno):
                if (
                    isinstance(value, ast.Call)
                    and call_name(value) == "min"
                    and len(value.args) == 2
                    and sum(_pow2_literal(a) for a in value.args) == 1
                    and not any(isinstance(a, ast.Constant) for a in value.args if not _pow2_literal(a))
                ):
                    caps[id(value)] = value
    if not caps:
        return
    text = program.text
    for value in sorted(caps.values(), key=lambda v: program.span(v), reverse=True):
        size = next(a for a in value.args if not _pow2_literal(a))
        start, end = program.span(size)
        text = text[:start] + f"triton.next_power_of_2({program.code(size)})" + text[end:]
    first = min(caps.values(), key=lambda v: v.lineno)
    yield Edit(
        "capped-block",
        "api-misuse",
        first.lineno,
        f"the block caps by a size made powers of two (`{program.code(first)}` and {len(caps) - 1} more)",
        text,
        f"`{program.code(first)}`: a block `tl.arange` ranges over, capped by a size that need not be a power of two",
        grounded=True,
    )


def _with_block(
    program: Program, kernel: ast.FunctionDef, sites: list[LaunchSite], size: str, block: str
) -> str | None:
    """Splice the edit of `arange_block`: every change made at its offsets, last first."""
    parsed = program.parsed
    splices: list[tuple[int, int, str]] = []
    for _, position in _constant_positions(kernel):
        for node in ast.walk(position):
            if isinstance(node, ast.Name) and node.id == size:
                splices.append((*parsed.span(node), block))
    arg = next(a for a in kernel.args.args if a.arg == size)
    if arg.annotation is not None:  # `N: tl.constexpr` stays a runtime size: its block is the constant now
        splices.append((*parsed.span(arg), size))
    last = kernel.args.args[-1]
    end = parsed.span(last)[1]
    splices.append((end, end, f", {block}: tl.constexpr"))
    names = params_of(kernel)
    index = names.index(size)
    for site in sites:
        value = _argument(site.call, names, index, size)
        if value is None or any(k.arg is None for k in site.call.keywords):
            return None
        given = [*site.call.args, *site.call.keywords]
        at = max(parsed.span(a)[1] for a in given) if given else parsed.span(site.call)[1] - 1
        comma = ", " if given else ""
        splices.append((at, at, f"{comma}{block}=triton.next_power_of_2({parsed.code(value)})"))
    text = parsed.text
    for start, end, new in sorted(splices, key=lambda s: (-s[0], -s[1])):
        text = text[:start] + new + text[end:]
    return text


def _argument(call: ast.Call, names: list[str], index: int, name: str) -> ast.expr | None:
    keyword = next((k.value for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return keyword
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(positional) != len(call.args):
        return None
    return positional[index] if index < len(positional) else None


# -- autotuned meta-parameters passed again -----------------------------------------------------


def _tuned_keys(decorator: ast.Call, program: Program | None = None) -> set[str]:
    """The meta-parameters an autotune's configs (`triton.Config({...})`) or a heuristics' dict set; with `program`,
    also those of a list the file binds to the name its `configs` are (`configs = [...]`, in any function)."""
    keys: set[str] = set()
    given = next((k.value for k in decorator.keywords if k.arg == "configs"), None)
    named = given.id if isinstance(given, ast.Name) else None
    lists: list[ast.AST] = [decorator]
    if program is not None and named is not None:
        lists += [
            n.value
            for n in ast.walk(program.parsed.tree)
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == named for t in n.targets)
        ]
    for node in (n for tree in lists for n in ast.walk(tree)):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return keys


def _decorators(program: Program, kernel: ast.FunctionDef) -> list[ast.Call]:
    return [d for d in (program.parsed.autotune(kernel), program.parsed.heuristics(kernel)) if d is not None]


@operator("autotune-keyword", "api-misuse")
def autotune_keyword(program: Program) -> Iterator[Edit]:
    """A launch that passes a meta-parameter its kernel's autotune (or heuristics) sets: drop it from the launch;
    or, for an autotune, drop the autotune and keep the launch's value."""
    parsed = program.parsed
    for kernel in parsed.kernels:
        decorators = _decorators(program, kernel)
        keys = set().union(*(_tuned_keys(d, program) for d in decorators)) if decorators else set()
        sites = [s for s in parsed.launches if s.kernel is kernel]
        clashes = [(s, k) for s in sites for k in s.call.keywords if k.arg in keys | _alias_keys(program, s)]
        if not clashes:
            continue
        named = ", ".join(sorted({k.arg or "" for _, k in clashes}))
        text = parsed.text
        for start, end in sorted((_keyword_span(program, s.call, k) for s, k in clashes), reverse=True):
            text = text[:start] + text[end:]
        cue_text = f"the launch passes {named}, which the kernel's autotune configs set"
        yield Edit(
            "autotune-keyword",
            "api-misuse",
            clashes[0][0].call.lineno,
            f"stop passing {named} at the launch: the autotuned configs set it",
            text,
            cue_text,
            grounded=True,
        )
        tune = parsed.autotune(kernel)
        if tune is not None and all(
            k.arg not in _tuned_keys(h, program) for h in decorators if h is not tune for _, k in clashes
        ):
            start, end = _decorator_span(program, tune)
            yield Edit(
                "autotune-keyword",
                "api-misuse",
                tune.lineno,
                f"drop the autotune of `{kernel.name}`: the launch gives {named} itself",
                parsed.text[:start] + parsed.text[end:],
                cue_text,
                grounded=True,
            )


def _aranged(program: Program, kernel: ast.FunctionDef) -> list[str]:
    """The kernel's `tl.constexpr` parameters that a `tl.arange` ranges over directly (its block sizes)."""
    constants = set(constexprs_of(kernel))
    return list(
        dict.fromkeys(
            node.args[1].id
            for node in ast.walk(kernel)
            if isinstance(node, ast.Call)
            and program.parsed.path_of(node.func) == "triton.language.arange"
            and len(node.args) == 2
            and isinstance(node.args[1], ast.Name)
            and node.args[1].id in constants
        )
    )


@operator("unset-block", "api-misuse")
def unset_block(program: Program) -> Iterator[Edit]:
    """A block size (a `tl.constexpr` parameter a `tl.arange` ranges over) that a launch does not pass, no default
    gives and no autotune config sets ("missing 1 required positional argument: 'BLOCK_SIZE'"): the launch passes
    it, a power of two (64 where the kernel has several blocks or a `tl.dot`, else 1024); one edit."""
    changes: list[tuple[ast.AST, str]] = []
    passed: list[str] = []
    for site in program.parsed.launches:
        kernel = site.kernel
        if any(k.arg is None for k in site.call.keywords) or any(isinstance(a, ast.Starred) for a in site.call.args):
            continue  # `**meta`, `*args`: what they hold is not in the source
        defaulted = set(params_of(kernel)[len(kernel.args.args) - len(kernel.args.defaults) :])
        tuned = set().union(
            *(_tuned_keys(d, program) for d in _decorators(program, kernel)), _alias_keys(program, site)
        )
        blocks = _aranged(program, kernel)
        missing = [b for b in blocks if b not in site_arguments(site) and b not in defaulted | tuned]
        if not missing:
            continue
        dots = any(isinstance(n, ast.Call) and call_name(n, last=True) == "dot" for n in ast.walk(kernel))
        value = 64 if len(blocks) > 1 or dots else 1024
        text, start = program.parsed.code(site.call), program.parsed.span(site.call)[0]
        given = ", ".join(f"{b}={value}" for b in missing)
        arguments = [*site.call.args, *(k.value for k in site.call.keywords)]
        if arguments:  # right after the last argument: a comment or a trailing comma after it stays where it is
            at = max(program.parsed.span(a)[1] for a in arguments) - start
            changes.append((site.call, f"{text[:at]}, {given}{text[at:]}"))
        else:
            at = program.parsed.span(site.call.func)[1] - start + 1  # just inside `(`
            changes.append((site.call, f"{text[:at]}{given}{text[at:]}"))
        passed.extend(missing)
    named = sorted(set(passed))[:4]
    yield from _rewrite(
        program,
        "unset-block",
        changes,
        f"pass the block size(s) the launch leaves unset: {', '.join(named)}",
        "a block size that no launch, default or autotune config gives",
    )


def _grid_functions(program: Program) -> dict[str, list[str]]:
    """Host functions (a `def` or a name bound to a `lambda`) by name, with their parameters that have no default."""
    found: dict[str, list[str]] = {}
    for node in program.host_nodes():
        if isinstance(node, ast.FunctionDef) and not program.parsed.is_kernel(node):
            arguments = node.args
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and len(node.targets) == 1:
            arguments = node.value.args
        else:
            continue
        name = node.name if isinstance(node, ast.FunctionDef) else ast.unparse(node.targets[0])
        required = arguments.posonlyargs + arguments.args
        found[name] = [a.arg for a in required[: len(required) - len(arguments.defaults)]]
    return found


@operator("grid-arity", "api-misuse")
def grid_arity(program: Program) -> Iterator[Edit]:
    """A launch grid that is a function of more than the meta-parameters (`def grid(meta, M, N)`; Triton calls it
    with the meta-parameters alone: "grid() missing 2 required positional arguments: 'M' and 'N'"): the launch
    passes the rest, each the launch's argument for the kernel parameter of that name (case aside),
    `kernel[lambda meta: grid(meta, M, N)](...)`; a grid whose extra names do not all name one parameter is left."""
    functions = _grid_functions(program)
    changes: list[tuple[ast.AST, str]] = []
    for site in program.parsed.launches:
        grid = site.call.func.slice if isinstance(site.call.func, ast.Subscript) else None
        needed = functions.get(ast.unparse(grid), []) if isinstance(grid, ast.Name) else []
        if grid is None or len(needed) < 2:
            continue
        arguments = site_arguments(site)
        passed = {name.lower(): [v for k, v in arguments.items() if k.lower() == name.lower()] for name in needed[1:]}
        if not all(len(values) == 1 for values in passed.values()):
            continue
        given = ", ".join(program.parsed.code(values[0]) for values in passed.values())
        changes.append((grid, f"(lambda meta: {ast.unparse(grid)}(meta, {given}))"))
    yield from _rewrite(
        program,
        "grid-arity",
        changes,
        "call the launch grid's function with the sizes it takes beside the meta-parameters",
        "a launch grid that is a function of more than the meta-parameters",
    )


def _alias_keys(program: Program, site: LaunchSite) -> set[str]:
    """What a launch through an alias that wraps its kernel (`tuned = triton.autotune(...)(kernel)`) tunes."""
    launched = site.call.func.value if isinstance(site.call.func, ast.Subscript) else None
    alias = program.parsed.kernel_aliases.get(launched.id) if isinstance(launched, ast.Name) else None
    return _tuned_keys(alias[1], program) if alias is not None else set()


def _keyword_span(program: Program, call: ast.Call, keyword: ast.keyword) -> tuple[int, int]:
    """The text of one keyword argument with the comma that separates it from its neighbours."""
    text = program.text
    start, end = program.parsed.span(keyword)
    before = text.rfind(",", 0, start)
    opened = program.parsed.span(call)[0]
    if before > opened and text[before + 1 : start].strip() == "":
        return before, end
    after = end
    while after < len(text) and text[after] in " \t\n":
        after += 1
    return start, after + 1 if after < len(text) and text[after] == "," else end


def _decorator_span(program: Program, decorator: ast.Call) -> tuple[int, int]:
    """From the decorator's `@` to the start of the next line."""
    start, end = program.parsed.span(decorator)
    at = program.text.rfind("@", 0, start)
    newline = program.text.find("\n", end)
    return at, newline + 1 if newline >= 0 else end


# -- an autotune over a plain function that launches a kernel -------------------------------------------


def _launched_kernel(program: Program, function: ast.FunctionDef) -> str | None:
    """The one jitted kernel a plain function's body does nothing but call or launch (`return kernel[grid](**kw)`)."""
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return | ast.Expr) or not isinstance(body[0].value, ast.Call):
        return None
    callee = body[0].value.func
    callee = callee.value if isinstance(callee, ast.Subscript) else callee
    if not isinstance(callee, ast.Name):
        return None
    kernel = program.parsed.kernel_names.get(callee.id)
    return callee.id if kernel is not None and program.parsed.autotune(kernel) is None else None


@operator("autotune-wrapper", "api-misuse")
def autotune_wrapper(program: Program) -> Iterator[Edit]:
    """`@triton.autotune(...) def tuned(...): return kernel[grid](...)` -> `tuned = triton.autotune(...)(kernel)`; on a
    plain function that does more than launch a kernel, the decorator dropped (its launches pass their own values)."""
    jitted = {id(k) for k in program.parsed.kernels}
    for function in ast.walk(program.parsed.tree):
        if not isinstance(function, ast.FunctionDef) or id(function) in jitted or len(function.decorator_list) != 1:
            continue
        tune = program.parsed.autotune(function)
        if tune is None:
            continue
        kernel = _launched_kernel(program, function)
        if kernel is None:  # a host function that does more than launch: its launches give their own values
            start, end = _decorator_span(program, tune)
            yield Edit(
                "autotune-wrapper",
                "api-misuse",
                tune.lineno,
                f"drop `@triton.autotune` from `{function.name}`, a plain function (its launches pass their values)",
                program.text[: program.text.rfind("\n", 0, start) + 1] + program.text[end:],
                f"`@triton.autotune` on `{function.name}`, a plain function: Triton autotunes jitted kernels",
                grounded=True,
            )
            continue
        start = _decorator_span(program, tune)[0]
        end = program.parsed.span(function)[1]
        line_start = program.text.rfind("\n", 0, start) + 1
        indent = program.text[line_start:start]
        wrapped = f"{function.name} = {program.parsed.code(tune)}({kernel})"
        yield Edit(
            "autotune-wrapper",
            "api-misuse",
            tune.lineno,
            f"autotune the kernel `{kernel}` itself, not the plain function `{function.name}` that launches it",
            program.text[:line_start] + indent + wrapped + program.text[end:],
            f"`@triton.autotune` on `{function.name}`, a plain function: Triton autotunes jitted kernels",
            grounded=True,
        )


# -- blocks indexed by a scalar ---------------------------------------------------------------------

_BLOCK_CALLS = {"arange", "zeros", "full", "zeros_like", "full_like", "load", "dot", "where", "broadcast_to"}


class _Facts:
    """Which of a kernel's names surely hold one number and which a block: least fixed points over its
    assignments, a few passes in source order (no recursion: a hostile kernel's chains of names cost linear time
    a pass; what the passes do not prove stays unproven, so no edit)."""

    PASSES = 8

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.scalars: set[str] = set()
        self.blocks: set[str] = set()
        for _ in range(self.PASSES):
            before = len(self.scalars)
            for name, values in kernel.assigns.items():
                if name not in kernel.params and name not in self.scalars and all(self.scalar(v) for v in values):
                    self.scalars.add(name)
            if len(self.scalars) == before:
                break
        for _ in range(self.PASSES):
            before = len(self.blocks)
            for name, values in kernel.assigns.items():
                if name not in self.blocks and self._made_block(name, values):
                    self.blocks.add(name)
            if len(self.blocks) == before:
                break

    def scalar(self, expr: ast.AST) -> bool:
        """Whether an index is surely one number: a literal, a program id, a loop's index, a parameter that is no
        pointer, a scalar load, or arithmetic on those."""
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, int) and not isinstance(expr.value, bool)
        if isinstance(expr, ast.Name):
            return self._scalar_name(expr.id)
        if isinstance(expr, ast.BinOp):
            return self.scalar(expr.left) and self.scalar(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self.scalar(expr.operand)
        if isinstance(expr, ast.Call):
            name = call_name(expr, last=True)
            if name == "to" and isinstance(expr.func, ast.Attribute):
                return self.scalar(expr.func.value)
            if name == "load" and expr.args:
                names = [n.id for n in ast.walk(expr.args[0]) if isinstance(n, ast.Name)]
                return all(n in self.kernel.params or self._scalar_name(n) for n in names)
            if name in ("range", "static_range", "program_id", "num_programs"):
                return True  # a loop's index (its iterator is what `assigns` records), a program's coordinates
            return name in ("cdiv", "min", "max") and all(self.scalar(a) for a in expr.args)
        return False

    def _scalar_name(self, name: str) -> bool:
        return not name.endswith("ptr") if name in self.kernel.params else name in self.scalars

    def block(self, name: str) -> bool:
        """Whether a local surely holds a block: made by `tl.arange` / `tl.load` / `tl.zeros`... or from such
        blocks, never a tuple or a list (Triton indexes those by constants)."""
        return name in self.blocks

    def _made_block(self, name: str, values: list[ast.expr]) -> bool:
        if name in self.kernel.params or not values or name in self.scalars:
            return False
        if any(isinstance(v, ast.Tuple | ast.List | ast.ListComp) for v in values):
            return False
        return any(
            (isinstance(node, ast.Call) and call_name(node, last=True) in _BLOCK_CALLS)
            or (isinstance(node, ast.Name) and node.id in self.blocks)
            for value in values
            for node in ast.walk(value)
        )


def _pick(node: ast.Subscript, facts: _Facts) -> tuple[str, int, ast.expr] | None:
    """(the block's name, the axis, the scalar index) where a subscript picks one element of a block along one axis
    (every other axis a full slice); None for what Triton takes (`x[:, None]`) or cannot be read."""
    if not (isinstance(node.value, ast.Name) and facts.block(node.value.id)):
        return None
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    full = [isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None for p in parts]
    picked = [i for i, p in enumerate(parts) if not full[i]]
    if len(picked) != 1 or not facts.scalar(parts[picked[0]]):
        return None
    return node.value.id, picked[0], parts[picked[0]]


def _picked_read(name: str, axis: int, rank: int, index_text: str) -> str:
    """The masked sum that reads one element along `axis`: Triton's GPU compiler takes it."""
    lanes = f"tl.arange(0, {name}.shape[{axis}])"
    if rank > 1:
        lanes += "[" + ", ".join(":" if d == axis else "None" for d in range(rank)) + "]"
    return f"tl.sum(tl.where({lanes} == ({index_text}), {name}, 0), axis={axis}).to({name}.dtype)"


class _Reads(ast.NodeTransformer):
    """Every picking read inside an expression, rewritten (for the text of a statement that holds several)."""

    def __init__(self, facts: _Facts) -> None:
        self.facts = facts

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        picked = _pick(node, self.facts) if isinstance(node.ctx, ast.Load) else None
        if picked is None:
            return self.generic_visit(node)
        rank = len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1
        index = ast.unparse(self.visit(picked[2]))
        return ast.parse(_picked_read(picked[0], picked[1], rank, index), mode="eval").body


def _with_reads(program: Program, facts: _Facts, expr: ast.expr) -> str:
    """An expression's text with its picking reads rewritten (its own text, byte for byte, where it has none)."""
    if not any(isinstance(n, ast.Subscript) and _pick(n, facts) for n in ast.walk(expr)):
        return program.parsed.code(expr)
    return ast.unparse(_Reads(facts).visit(ast.parse(program.parsed.code(expr).strip(), mode="eval").body))


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def _picked_write(program: Program, facts: _Facts, stmt: ast.stmt) -> str | None:
    """`v[i] = x` (or `v[i] += x`) on a one-axis block as the `tl.where` that replaces that element."""
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
    target = stmt.target if isinstance(stmt, ast.AugAssign) else target
    if not isinstance(target, ast.Subscript) or isinstance(target.slice, ast.Tuple):
        return None
    picked = _pick(target, facts)
    if picked is None:
        return None
    name, _, index = picked
    assert isinstance(stmt, ast.Assign | ast.AugAssign)
    value = _with_reads(program, facts, stmt.value)
    if isinstance(stmt, ast.AugAssign):
        if type(stmt.op) not in _OPS:
            return None
        value = f"{_picked_read(name, 0, 1, program.parsed.code(index))} {_OPS[type(stmt.op)]} ({value})"
    lanes = f"tl.arange(0, {name}.shape[0]) == ({program.parsed.code(index)})"
    return f"{name} = tl.where({lanes}, {value}, {name}).to({name}.dtype)"


def _kernel_facts(program: Program) -> Iterator[tuple[ast.FunctionDef, _Facts]]:
    """Each kernel of the file with what its names surely hold (kernels the dataflow cannot read are skipped)."""
    flow = Dataflow(program.parsed)
    for node in program.parsed.kernels:
        kernel = flow.kernel_of(node)
        if kernel is not None:
            yield node, _Facts(kernel)


@operator("block-index", "api-misuse")
def block_index(program: Program) -> Iterator[Edit]:
    """Every block indexed by a scalar, read or written, rewritten as Triton's GPU compiler takes it (one edit)."""
    changes: list[tuple[ast.AST, str]] = []
    for node, facts in _kernel_facts(program):
        for stmt in ast.walk(node):
            written = _picked_write(program, facts, stmt) if isinstance(stmt, ast.Assign | ast.AugAssign) else None
            if written is not None:
                changes.append((stmt, written))
            elif isinstance(stmt, ast.Subscript) and isinstance(stmt.ctx, ast.Load) and _pick(stmt, facts):
                changes.append((stmt, _with_reads(program, facts, stmt)))
    picked = sorted({program.parsed.code(n) for n, _ in changes})[:3]
    yield from _rewrite(
        program,
        "block-index",
        changes,
        f"pick {', '.join(f'`{p}`' for p in picked)} with a masked sum (Triton cannot index a block by a scalar)",
        f"{', '.join(picked)}: a block indexed by a scalar, which Triton's GPU compiler refuses",
    )


# -- blocks sliced by a range ------------------------------------------------------------------------


def _slice_width(program: Program, part: ast.Slice) -> str | None:
    """The width of `[lo:hi]` as the text the slice already states: `hi` itself where `lo` is absent or 0, `W` for
    `[lo:lo + W]` (or `[lo:W + lo]`), the difference of two literals; None for a step or a width the text does not
    state (no arithmetic is guessed)."""
    lo, hi = part.lower, part.upper
    if part.step is not None or hi is None:
        return None
    if lo is None or (isinstance(lo, ast.Constant) and lo.value == 0):
        return program.parsed.code(hi)
    if isinstance(lo, ast.Constant) and isinstance(hi, ast.Constant):
        ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (lo.value, hi.value))
        return str(hi.value - lo.value) if ok and hi.value > lo.value else None  # type: ignore[operator]
    if isinstance(hi, ast.BinOp) and isinstance(hi.op, ast.Add):
        text = ast.unparse(lo)
        if ast.unparse(hi.left) == text:
            return program.parsed.code(hi.right)
        if ast.unparse(hi.right) == text:
            return program.parsed.code(hi.left)
    return None


def _sliced_read(program: Program, facts: _Facts, node: ast.Subscript) -> str | None:
    """`x[lo:lo + W]` on a one-axis block as the gather Triton's GPU compiler takes: a `W × len(x)` one-hot of the
    lanes picked, summed along `x`'s axis."""
    part = node.slice
    if not (isinstance(node.value, ast.Name) and facts.block(node.value.id) and isinstance(part, ast.Slice)):
        return None
    if part.lower is not None and not facts.scalar(part.lower):
        return None
    width = _slice_width(program, part)
    if width is None:
        return None
    name = node.value.id
    start = "0" if part.lower is None else program.parsed.code(part.lower)
    picked = f"(({start}) + tl.arange(0, {width}))[:, None]"
    lanes = f"tl.arange(0, {name}.shape[0])[None, :]"
    return f"tl.sum(tl.where({lanes} == {picked}, {name}[None, :], 0), axis=1).to({name}.dtype)"


@operator("block-slice", "api-misuse")
def block_slice(program: Program) -> Iterator[Edit]:
    """Every range sliced out of a block (`offs[i:i + VEC]`), which Triton's GPU compiler refuses ("unsupported tensor
    index: slice"), read as a one-hot gather of the same lanes (one edit)."""
    changes: list[tuple[ast.AST, str]] = []
    for node, facts in _kernel_facts(program):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load):
                read = _sliced_read(program, facts, sub)
                if read is not None:
                    changes.append((sub, read))
    picked = sorted({program.parsed.code(n) for n, _ in changes})[:3]
    yield from _rewrite(
        program,
        "block-slice",
        changes,
        f"gather {', '.join(f'`{p}`' for p in picked)} with a one-hot sum (Triton cannot slice a block)",
        f"{', '.join(picked)}: a range sliced out of a block, which Triton's GPU compiler refuses",
    )


# -- blocks flattened the PyTorch way ----------------------------------------------------------------


def _minus_one(shape: ast.expr) -> bool:
    """`-1`, `(-1,)` or `[-1]`: PyTorch's "all of it" shape, which Triton's reshape does not take."""
    items = shape.elts if isinstance(shape, ast.Tuple | ast.List) else [shape]
    return (
        len(items) == 1
        and isinstance(c := items[0], ast.UnaryOp)
        and isinstance(c.op, ast.USub)
        and (isinstance(c.operand, ast.Constant) and c.operand.value == 1)
    )


def _flattened(program: Program, call: ast.Call) -> ast.expr | None:
    """The block a call flattens the PyTorch way (`x.flatten()`, `tl.reshape(x, (-1,))`, `x.view(-1)`), or None."""
    name = call_name(call, last=True)
    method = isinstance(call.func, ast.Attribute) and not program.parsed.path_of(call.func).startswith("triton.")
    if method and isinstance(call.func, ast.Attribute) and not call.keywords:
        if name == "flatten" and not call.args:
            return call.func.value
        if name in ("reshape", "view") and len(call.args) == 1 and _minus_one(call.args[0]):
            return call.func.value
    path = program.parsed.path_of(call.func)
    if path in ("triton.language.reshape", "triton.language.view") and len(call.args) == 2 and not call.keywords:
        return call.args[0] if _minus_one(call.args[1]) else None
    return None


@operator("flatten-ravel", "api-misuse")
def flatten_ravel(program: Program) -> Iterator[Edit]:
    """Every block flattened the PyTorch way in a kernel, written `tl.ravel` (one edit)."""
    changes: list[tuple[ast.AST, str]] = []
    for kernel in program.parsed.kernels:
        for node in ast.walk(kernel):
            block = _flattened(program, node) if isinstance(node, ast.Call) else None
            if block is not None:
                changes.append((node, f"tl.ravel({program.parsed.code(block)})"))
    named = sorted({program.parsed.code(n) for n, _ in changes})[:3]
    yield from _rewrite(
        program,
        "flatten-ravel",
        changes,
        f"flatten with `tl.ravel` ({', '.join(f'`{n}`' for n in named)})",
        f"{', '.join(named)}: PyTorch's flatten, which Triton's blocks do not have",
    )


# -- numbers passed as 0-d tensors ---------------------------------------------------------------------

_ZERO_D = {"torch.tensor", "torch.as_tensor", "torch.scalar_tensor"}
_ONE_ELEMENT = {"torch.zeros", "torch.ones", "torch.empty", "torch.full"}
_WHOLE = {"sum", "max", "min", "mean", "norm", "prod", "amax", "amin"}
"""Reductions that, called with the tensor alone (no `dim`), leave one element."""
_KEEPS = {
    "sqrt",
    "rsqrt",
    "clamp",
    "clamp_min",
    "clamp_max",
    "abs",
    "exp",
    "log",
    "reciprocal",
    "to",
    "float",
    "double",
    "half",
    "contiguous",
    "detach",
    "maximum",
    "minimum",
    "pow",
    "square",
}
"""Element-wise calls that keep a one-element tensor one element (`torch.sqrt(t)`, `t.clamp(min=eps)`)."""


def _one_element(
    program: Program, value: ast.expr, site: LaunchSite, depth: int = 4, line: int | None = None
) -> str | None:
    """Whether a launch argument is a tensor of one element, and where its value comes from: `"number"` for a number
    made a tensor (`torch.tensor(alpha, ...)`), `"data"` for one computed from tensors: a whole reduction (`x.sum()`,
    `torch.norm(x)`), the element of a one-element buffer (`buf[0]` of `torch.zeros(1, ...)`), and what element-wise
    calls and arithmetic with numbers make of these (`torch.sqrt(total[0]).clamp(min=1e-8)`); None where not surely
    so. A name is read from what the host assigned it before `line` (the launch's, then the assignment's own:
    `t = t.clamp(min=eps)`), every time."""
    line = site.call.lineno if line is None else line
    if depth < 0:
        return None
    if isinstance(value, ast.Name):
        made = host_assignments(site.host, value.id, before=line)
        return _joined([_one_element(program, v, site, depth - 1, v.lineno) for v in made])
    if isinstance(value, ast.BinOp):
        sides = [value.left, value.right]
        found = [None if isinstance(x, ast.Constant) else _one_element(program, x, site, depth, line) for x in sides]
        numbers = [f for x, f in zip(sides, found, strict=True) if not isinstance(x, ast.Constant)]
        return _joined(numbers)
    if isinstance(value, ast.Subscript):
        buffer = isinstance(value.slice, ast.Constant) and _one_element_buffer(program, value.value, site, line)
        return "data" if buffer else None
    if not isinstance(value, ast.Call):
        return None
    path = program.parsed.path_of(value.func) or ""
    method = value.func.attr if isinstance(value.func, ast.Attribute) else ""
    if path in _ZERO_D and value.args:
        number = value.args[0]
        made_of_tensor = isinstance(number, ast.Call) and "tensor" in program.parsed.code(number.func)
        shaped = isinstance(number, ast.List | ast.Tuple | ast.ListComp | ast.Starred)
        return None if shaped or made_of_tensor else "number"
    whole = not value.keywords and method in _WHOLE
    if path.startswith("torch.") and len(value.args) == 1 and whole:
        return "data"  # torch.sum(x)
    if not path.startswith("torch.") and not value.args and whole:
        return "data"  # x.sum()
    if method in _KEEPS:
        inner = value.args[0] if path.startswith("torch.") and value.args else value.func.value  # type: ignore[attr-defined]
        return _one_element(program, inner, site, depth, line)
    return None


def _joined(origins: list[str | None]) -> str | None:
    """Every origin known: "data" where any is, else "number"; None where one is unknown (or none is given)."""
    if not origins or None in origins:
        return None
    return "data" if "data" in origins else "number"


def _one_element_buffer(program: Program, value: ast.expr, site: LaunchSite, line: int) -> bool:
    """Whether a host name holds `torch.zeros(1, ...)` (or `ones`, `empty`, `full((1,), ...)`) every time."""
    if not isinstance(value, ast.Name):
        return False
    made = host_assignments(site.host, value.id, before=line)

    def one(v: ast.expr) -> bool:
        if not (isinstance(v, ast.Call) and v.args and program.parsed.path_of(v.func) in _ONE_ELEMENT):
            return False
        size = v.args[0]
        if isinstance(size, ast.Tuple | ast.List) and len(size.elts) == 1:
            size = size.elts[0]
        return isinstance(size, ast.Constant) and size.value == 1

    return bool(made) and all(one(v) for v in made)


@operator("scalar-tensor", "api-misuse")
def scalar_tensor(program: Program) -> Iterator[Edit]:
    """Every one-element tensor a launch passes for a parameter its kernel never addresses memory with: one made from
    a number passed `.item()`; one computed from tensors (a norm, a sum) read by the kernel with `tl.load`, so that
    no value derived from the inputs is read into Python (kope's judge rejects that as the host's work)."""
    changes: list[tuple[ast.AST, str]] = []
    loaded: dict[ast.FunctionDef, set[str]] = {}
    for site in program.parsed.launches:
        pointers = pointers_of(site.kernel)
        for name, value in site_arguments(site).items():
            if name in pointers:
                continue
            origin = _one_element(program, value, site)
            if origin == "number":
                changes.append((value, f"{program.parsed.code(value)}.item()"))
            elif origin == "data" and name in params_of(site.kernel):
                loaded.setdefault(site.kernel, set()).add(name)
    for kernel, names in loaded.items():
        first = kernel.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(kernel.body) > 1:
            first = kernel.body[1]  # after the docstring
        indent = " " * first.col_offset
        header = "".join(f"{n} = tl.load({n})\n{indent}" for n in sorted(names))
        changes.append((first, header + program.parsed.code(first)))
    items = sorted({program.parsed.code(n) for n, _ in changes if not isinstance(n, ast.stmt)})
    reads = sorted({n for names in loaded.values() for n in names})
    how = [f"pass {', '.join(f'`{n}`' for n in items[:3])} `.item()`"] if items else []
    how += [f"read {', '.join(f'`{n}`' for n in reads[:3])} with `tl.load` in the kernel"] if reads else []
    yield from _rewrite(
        program,
        "scalar-tensor",
        changes,
        "; ".join(how) + ": a tensor reaches the kernel as a pointer",
        f"{', '.join((items + reads)[:3])}: a one-element tensor passed where the kernel computes with a number",
    )


# -- memory hints Triton cannot read -------------------------------------------------------------

HINTS = {
    ("load", "cache_modifier"): {"", ".ca", ".cg", ".cv"},
    ("store", "cache_modifier"): {"", ".wb", ".cg", ".cs", ".wt"},
    ("load", "eviction_policy"): {"", "evict_first", "evict_last"},
    ("store", "eviction_policy"): {"", "evict_first", "evict_last"},
}
"""The hint keywords of `tl.load` / `tl.store` and the values Triton's code generator accepts for each."""


def _lacks(path: str) -> bool:
    """Whether a `triton.language` path names nothing in the installed Triton."""
    import triton.language as language

    node: object = language
    for part in path.removeprefix("triton.language.").split("."):
        if not hasattr(node, part):
            return True
        node = getattr(node, part)
    return False


def _unreadable_hint(program: Program, call: str, keyword: ast.keyword) -> bool:
    """Whether a hint's value is a string Triton refuses, or an attribute of `triton.language` it does not have."""
    accepted = HINTS.get((call, keyword.arg or ""))
    if accepted is None:
        return False
    value = keyword.value
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str) and value.value not in accepted
    path = program.parsed.path_of(value) if isinstance(value, ast.Attribute) else ""
    return path.startswith("triton.language.") and _lacks(path)


@operator("hint-keyword", "api-misuse")
def hint_keyword(program: Program) -> Iterator[Edit]:
    """Every `tl.load` / `tl.store` hint Triton cannot read, dropped (one edit: a hint never changes a value)."""
    dropped: list[tuple[ast.Call, ast.keyword]] = []
    for kernel in program.parsed.kernels:
        for node in ast.walk(kernel):
            if isinstance(node, ast.Call):
                call = program.parsed.path_of(node.func).removeprefix("triton.language.")
                dropped += [(node, k) for k in node.keywords if _unreadable_hint(program, call, k)]
    if not dropped:
        return
    text = program.text
    for start, end in sorted((_keyword_span(program, c, k) for c, k in dropped), reverse=True):
        text = text[:start] + text[end:]
    named = ", ".join(sorted({program.parsed.code(k.value) for _, k in dropped}))
    yield Edit(
        "hint-keyword",
        "api-misuse",
        dropped[0][0].lineno,
        f"drop the memory hints Triton cannot read ({named})",
        text,
        f"{named}: a hint the installed Triton does not accept",
        grounded=True,
    )


# -- keywords a callee does not take, and hints Triton cannot compile -----------------------------------

_UNEXPECTED = re.compile(r"got an unexpected keyword argument '(\w+)'|argument '(\w+)' must be [\w.]+, not ")
"""A keyword its callee does not take, or one given a value of a type it does not take (`torch.empty(...,
layout=torch.contiguous_format)`: "argument 'layout' must be torch.layout, not torch.memory_format")."""
_TRITON_SPELLING = {"keepdims": "keep_dims", "keepdim": "keep_dims", "dim": "axis"}
"""Keywords of NumPy's and PyTorch's reductions that Triton's `tl.sum` / `tl.max` / ... spell otherwise."""
_REDUCTIONS = frozenset(
    {"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "reduce_or", "cumsum", "cumprod", "associative_scan"}
)
"""Triton's reductions and scans: they take `axis=` and `keep_dims=` (`tl.sort` and `tl.flip` do take `dim=`)."""
_COMPILER_HINTS = frozenset({"multiple_of", "max_contiguous", "max_constancy", "assume"})
"""`tl` functions that tell the compiler a fact and return their first argument (or nothing): never a value."""


def _spans_line(node: ast.AST, line: int | None) -> bool:
    start = getattr(node, "lineno", 0)
    return line is not None and start <= line <= (getattr(node, "end_lineno", None) or start)


@operator("unknown-keyword", "api-misuse")
def unknown_keyword(program: Program) -> Iterator[Edit]:
    """A keyword argument its callee does not take, as the evaluation's error names it ("Config.__init__() got an
    unexpected keyword argument 'num_consumer_groups'", `tl.zeros(..., scope="shared")`, `tl.load(...,
    cache_read=True)`), dropped from the call on the error's line and from every other call of that callee passing
    it (an autotune's configs all do); without a line, from the calls of Triton's and PyTorch's functions passing
    it. A keyword given a value of a type the callee does not take ("argument 'layout' must be torch.layout, not
    torch.memory_format") is dropped the same way: the callee's default. No call ever ran with that keyword: the
    values it computes are what the kernel is judged on."""
    found = _UNEXPECTED.search(program.error[:_MESSAGE_CHARS])
    if found is None:
        return
    keyword, line = found.group(1) or found.group(2), program.error_line()
    taken = "a keyword it does not take" if found.group(1) else "a value of a type it does not take"
    calls = [
        node
        for node in ast.walk(program.parsed.tree)
        if isinstance(node, ast.Call) and any(k.arg == keyword for k in node.keywords)
    ]
    here = {program.parsed.path_of(c.func) for c in calls if _spans_line(c, line)} - {""}
    chosen = [
        c
        for c in calls
        if _spans_line(c, line)
        or program.parsed.path_of(c.func) in here
        or (not here and program.parsed.path_of(c.func).startswith(("triton.", "torch.")))
    ]
    if not chosen:
        return
    callees = ", ".join(sorted({program.parsed.code(c.func) for c in chosen}))
    # NumPy's name for a keyword Triton's reductions spell otherwise: `keyword-spelling` renames it (grounded)
    spelled = keyword in _TRITON_SPELLING and all(_triton_reduction(program, c) for c in chosen)
    spans = {_keyword_span(program, c, k) for c in chosen for k in c.keywords if k.arg == keyword}
    text = program.text
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + text[end:]
    yield Edit(
        "unknown-keyword",
        "api-misuse",
        chosen[0].lineno,
        f"drop `{keyword}=` from {callees}: {taken}",
        text,
        f"{keyword}: the error says {callees} takes no such keyword" if found.group(1) else f"{keyword}: {taken}",
        grounded=not spelled,
    )


def _triton_reduction(program: Program, call: ast.Call) -> bool:
    """Whether a call is one of Triton's reductions or scans (`tl.sum`, `tl.max`, `tl.cumsum`, ...)."""
    path = program.parsed.path_of(call.func)
    return path.startswith("triton.language.") and path.rpartition(".")[2] in _REDUCTIONS


@operator("keyword-spelling", "api-misuse")
def keyword_spelling(program: Program) -> Iterator[Edit]:
    """NumPy's and PyTorch's keyword names on Triton's reductions (`tl.sum(x, axis=1, keepdims=True)`, `dim=1`),
    which Triton spells `keep_dims` and `axis`: renamed in every such call (one edit). The call means what it says;
    dropping the keyword (`unknown-keyword`) would change the result's shape. Grounded: no Triton reduction takes
    those names, whatever error the evaluation stopped on first."""
    found = [
        (k, _TRITON_SPELLING[k.arg])
        for kernel in program.parsed.kernels
        for node in ast.walk(kernel)
        if isinstance(node, ast.Call) and _triton_reduction(program, node)
        for k in node.keywords
        if k.arg in _TRITON_SPELLING
    ]
    if not found:
        return
    text = program.text
    for keyword, spelled in sorted(found, key=lambda f: program.parsed.span(f[0])[0], reverse=True):
        start = program.parsed.span(keyword)[0]
        text = text[:start] + spelled + text[start + len(keyword.arg or "") :]
    named = ", ".join(sorted({f"`{k.arg}=` -> `{spelled}=`" for k, spelled in found}))
    yield Edit(
        "keyword-spelling",
        "api-misuse",
        min(k.lineno for k, _ in found),
        f"{named} in Triton's reductions: Triton's names for them",
        text,
        f"{named}: NumPy's names, which Triton's reductions do not take",
        grounded=True,
    )


@operator("hint-call", "api-misuse")
def hint_call(program: Program) -> Iterator[Edit]:
    """A compiler hint Triton refuses where the kernel writes it (`tl.multiple_of(ptrs, 16)` over a 2-D block: "Shape
    of input to multiple_of does not match the length of values"; `tl.multiple_of(BLOCK_K, 8)` over a constant),
    made its first argument; and a statement calling a `tl.` function the installed Triton lacks whose value nothing
    reads (`tl.assume_aligned(x_ptr, 128)`, `tl.syncthreads()`), dropped (`pass`). A hint returns its argument; a
    statement nothing reads changes no value: one edit, every such call."""
    line, error = program.error_line(), program.error[:_MESSAGE_CHARS]
    changes: list[tuple[ast.AST, str]] = []
    for node in program.parsed.kernel_nodes():
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            path = program.parsed.path_of(node.value.func)
            if path.startswith("triton.language.") and _lacks(path):
                changes.append((node, "pass"))
                continue
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = program.parsed.path_of(node.func).removeprefix("triton.language.")
        if name in _COMPILER_HINTS and (_spans_line(node, line) or f"{name} " in error or f"{name}(" in error):
            changes.append((node, program.parsed.code(node.args[0])))
    calls = [n.value if isinstance(n, ast.Expr) else n for n, _ in changes]
    named = sorted({program.parsed.code(c.func) for c in calls if isinstance(c, ast.Call)})
    yield from _rewrite(
        program,
        "hint-call",
        changes,
        f"drop the hints and unread calls Triton cannot compile: {', '.join(f'`{n}`' for n in named)}",
        f"{', '.join(named)}: a hint Triton refuses there, or a call of a function it lacks whose value is unused",
    )


# -- a pointer compared with 0 ------------------------------------------------------------------------


def _null_test(program: Program, node: ast.AST, pointers: frozenset[str]) -> tuple[str, bool] | None:
    """A kernel's test of a pointer parameter against null (`b_ptr != 0`, `b_ptr == 0`, `b_ptr != None`,
    `tl.pointer_is_null(b_ptr)`): the pointer and whether the test is true when it is null."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        left, right = node.left, node.comparators[0]
        pointer, null = (left, right) if isinstance(left, ast.Name) else (right, left)
        if (
            isinstance(pointer, ast.Name)
            and pointer.id in pointers
            and isinstance(null, ast.Constant)
            and (null.value is None or (null.value == 0 and not isinstance(null.value, bool)))
        ):
            return pointer.id, isinstance(node.ops[0], ast.Eq)
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in pointers
        and program.parsed.path_of(node.func).rpartition(".")[2] in ("pointer_is_null", "is_null")
    ):
        return node.args[0].id, True
    return None


def _null_arguments(value: ast.expr, site: LaunchSite, depth: int = 2) -> list[ast.Constant]:
    """The `0`s a launch argument passes for a missing tensor: a branch of a conditional (`bias if bias is not None
    else 0`), or of what a name the host bound holds."""
    if isinstance(value, ast.Name) and depth > 0:
        bound = host_assignments(site.host, value.id, before=site.call.lineno)
        return [c for v in bound for c in _null_arguments(v, site, depth - 1)]
    if isinstance(value, ast.IfExp):
        return [
            branch
            for branch in (value.body, value.orelse)
            if isinstance(branch, ast.Constant) and branch.value == 0 and not isinstance(branch.value, bool)
        ] + [c for branch in (value.body, value.orelse) for c in _null_arguments(branch, site, depth - 1)]
    return []


@operator("null-pointer", "api-misuse")
def null_pointer(program: Program) -> Iterator[Edit]:
    """A kernel that tests a pointer parameter against null (`if b_ptr != 0:`, `tl.pointer_is_null(b_ptr)`: "invalid
    operands of type pointer<fp32> and triton.language.int32", on every input), and a launch that passes `0` for a
    missing tensor: Triton's way is `None`, which it specializes at compile time. The test becomes `b_ptr is not None`
    (`is None`), the launch's `0` becomes `None`; where a tensor is always passed the branch is always taken, as the
    test meant."""
    changes: list[tuple[ast.AST, str]] = []
    tested: set[str] = set()
    for kernel in program.parsed.kernels:
        pointers = pointers_of(kernel)
        for node in ast.walk(kernel):
            found = _null_test(program, node, pointers)
            if found is not None:
                changes.append((node, f"{found[0]} is {'' if found[1] else 'not '}None"))
                tested.add(found[0])
        for site in (s for s in program.parsed.launches if s.kernel is kernel):
            for name, value in site_arguments(site).items():
                if name in tested:
                    changes += [(zero, "None") for zero in _null_arguments(value, site)]
    yield from _rewrite(
        program,
        "null-pointer",
        changes,
        f"test {', '.join(f'`{n}`' for n in sorted(tested))} against None, as Triton specializes a missing tensor",
        f"{', '.join(sorted(tested))}: a pointer compared with null, which Triton's compiler refuses",
    )


# -- functions Triton does not have ---------------------------------------------------------------

WRITTEN_AS = {
    "tanh": "(2.0 * tl.sigmoid(2.0 * ({0})) - 1.0)",
    "log1p": "tl.log(1.0 + ({0}))",
    "expm1": "(tl.exp({0}) - 1.0)",
    "any": "(tl.max(tl.where({0}, 1, 0)) > 0)",
    "all": "(tl.min(tl.where({0}, 1, 0)) > 0)",
    "relu": "tl.maximum({0}, 0.0)",
    "square": "(({0}) * ({0}))",
    "silu": "(({0}) * tl.sigmoid({0}))",
    "softplus": "tl.where(({0}) > 20.0, ({0}), tl.log(1.0 + tl.exp({0})))",
    "gelu": "(0.5 * ({0}) * (1.0 + tl.erf(({0}) * 0.7071067811865476)))",
    "sign": "tl.where(({0}) > 0, 1.0, tl.where(({0}) < 0, -1.0, 0.0))",
    "trunc": "tl.where(({0}) >= 0, tl.floor({0}), tl.ceil({0}))",
    "reciprocal": "(1.0 / ({0}))",
    "log10": "(tl.log({0}) * 0.4342944819032518)",
    "isnan": "(({0}) != ({0}))",
    "isinf": "(tl.abs({0}) == float('inf'))",
    "round": "tl.extra.libdevice.rint({0})",
    "floor_divide": "(({0}) // ({1}))",
    "fmod": "(({0}) % ({1}))",
    "pow": "tl.extra.libdevice.pow({0}, {1})",
    "atan2": "tl.extra.libdevice.atan2({0}, {1})",
    "floor_div": "(({0}) // ({1}))",
    "fast_div": "(({0}) / ({1}))",
    "rcp": "(1.0 / ({0}))",
    "fast_reciprocal": "(1.0 / ({0}))",
    "fast_exp": "tl.exp({0})",
    "fast_log": "tl.log({0})",
    "fast_sqrt": "tl.sqrt({0})",
    "fast_tanh": "(2.0 * tl.sigmoid(2.0 * ({0})) - 1.0)",
    "static": "({0})",
    "recip": "(1.0 / ({0}))",
    "clip": "tl.clamp({0}, {1}, {2})",
    "astype": "({0}).to({1})",
    "dtype_like": "({0}).dtype.element_ty",
    "expand_mask": "({0})",
    "expand_mask/2": "tl.broadcast_to({0}, {1})",
    "full_like/2": "tl.full(({0}).shape, {1}, ({0}).dtype)",
    "full_like/3": "tl.full(({0}).shape, {1}, {2})",
    "ones_like": "tl.full(({0}).shape, 1, ({0}).dtype)",
    "floordiv": "(({0}) // ({1}))",
    "transpose": "tl.trans({0})",
    "flatten": "tl.reshape({0}, (({0}).numel,))",
    "reduce_max": "tl.max({0})",
    "reduce_max/2": "tl.max({0}, {1})",
    "reduce_min": "tl.min({0})",
    "reduce_min/2": "tl.min({0}, {1})",
    "reduce_sum": "tl.sum({0})",
    "reduce_sum/2": "tl.sum({0}, {1})",
    "reduce_and": "(tl.min(tl.where({0}, 1, 0)) > 0)",
}
"""Functions models call on `tl` (or `tl.math`) that Triton's language may not have, written with ones it has
(`name/n`: its form for n arguments, where it has several)."""


def _arity(written: str) -> int:
    """How many arguments a written-out form takes (`{0}`, `{1}`)."""
    return len(set(re.findall(r"\{(\d)\}", written)))


_MODULES = {"triton.language": "", "triton.language.math": "math", "triton.language.libdevice": "libdevice"}
"""Where models look for a function: `tl.f`, `tl.math.f`, and `tl.libdevice.f` (an older Triton's)."""


def _written(path: str, args: list[str]) -> str | None:
    """A call of `path` the installed Triton lacks, written with what it has: a written-out form, the function where
    `tl` has it (`tl.math.fdiv` -> `tl.fdiv`), or CUDA's libdevice's (`tl.libdevice.erf` -> `tl.extra.libdevice.erf`);
    None where the call is fine as it is, or nothing has it."""
    import triton.language as language
    from triton.language.extra import libdevice

    module, _, name = path.rpartition(".")
    if module not in _MODULES:
        return None
    where = getattr(language, _MODULES[module], None) if _MODULES[module] else language
    if where is not None and hasattr(where, name):
        return None
    form = next(
        (
            WRITTEN_AS[k]
            for k in (name, f"{name}/{len(args)}")
            if k in WRITTEN_AS and _arity(WRITTEN_AS[k]) == len(args)
        ),
        None,
    )
    if form is not None and not hasattr(language, name):
        return form.format(*args)
    if hasattr(language, name) and callable(getattr(language, name)):
        return f"tl.{name}({', '.join(args)})"
    if hasattr(libdevice, name):
        return f"tl.extra.libdevice.{name}({', '.join(args)})"
    return None


@operator("missing-function", "api-misuse")
def missing_function(program: Program) -> Iterator[Edit]:
    """Every call of a `tl.` function the installed Triton lacks, rewritten with functions it has (one edit)."""
    calls: list[ast.Call] = []
    for kernel in program.parsed.kernels:
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and node.args and not node.keywords):
                continue
            if _written(program.parsed.path_of(node.func), [program.parsed.code(a) for a in node.args]) is not None:
                calls.append(node)
    kept = {id(node) for node, _ in _outermost(program, [(c, "") for c in calls])}
    outermost = [c for c in calls if id(c) in kept]
    axes = [  # NumPy's `x[np.newaxis, :]` written `tl.newaxis`: Triton's is `None`
        node
        for kernel in program.parsed.kernels
        for node in ast.walk(kernel)
        if isinstance(node, ast.Attribute) and program.parsed.path_of(node) == "triton.language.newaxis"
    ]
    if not outermost and not axes:
        return
    changes: list[tuple[ast.AST, str]] = [(node, "None") for node in axes]
    for call in outermost:
        written = _written(program.parsed.path_of(call.func), [program.parsed.code(a) for a in call.args])
        if written is not None:
            changes.append((call, written))
    named = sorted({program.parsed.code(c.func) for c in outermost} | {program.parsed.code(a) for a in axes})
    yield from _rewrite(
        program,
        "missing-function",
        changes,
        f"write {', '.join(f'`{n}`' for n in named)} with functions Triton has",
        f"{', '.join(named)}: not in the installed Triton's language",
    )


def _rewrite(
    program: Program, name: str, changes: list[tuple[ast.AST, str]], description: str, cue: str
) -> Iterator[Edit]:
    """One grounded edit of the kind making every change at once (the outermost of nested ones); none without."""
    made = _outermost(program, changes)
    if made:
        line = getattr(made[0][0], "lineno", 0)
        yield Edit(name, "api-misuse", line, description, program.replace_all(made), cue, grounded=True)


def _outermost(program: Program, changes: list[tuple[ast.AST, str]]) -> list[tuple[ast.AST, str]]:
    """The changes whose node is not inside another change's node (an inner one is made in a later round)."""
    spans = [program.parsed.span(node) for node, _ in changes]
    return [
        change
        for change, (a, b) in zip(changes, spans, strict=True)
        if not any(x <= a and b <= y and (x, y) != (a, b) for x, y in spans)
    ]


# -- a dtype called as a function ------------------------------------------------------------------

_DTYPES = frozenset(
    f"{kind}{bits}"
    for kind, widths in (("float", (16, 32, 64)), ("int", (8, 16, 32, 64)), ("uint", (8, 16, 32, 64)))
    for bits in widths
) | {"bfloat16"}


@operator("dtype-call", "api-misuse")
def dtype_call(program: Program) -> Iterator[Edit]:
    """`tl.float32(x)` (or `tl.view(x, tl.float32)`) -> `tl.cast(x, tl.float32)`, every such call in the kernels (one
    edit)."""
    changes: list[tuple[ast.AST, str]] = []
    for kernel in program.parsed.kernels:
        for node in ast.walk(kernel):
            if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
                path = program.parsed.path_of(node.func)
                if path.startswith("triton.language.") and path.rsplit(".", 1)[-1] in _DTYPES:
                    dtype = program.parsed.code(node.func)
                    changes.append((node, f"tl.cast({program.parsed.code(node.args[0])}, {dtype})"))
            elif isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords:
                path = program.parsed.path_of(node.func)
                shape = program.parsed.path_of(node.args[1])
                reshaped = path in ("triton.language.view", "triton.language.reshape")
                if reshaped and shape.startswith("triton.language.") and shape.rsplit(".", 1)[-1] in _DTYPES:
                    value, dtype = (program.parsed.code(a) for a in node.args)
                    changes.append((node, f"tl.cast({value}, {dtype})"))  # `tl.view(x, tl.float32)`: a cast meant
    if changes:
        yield from _rewrite(
            program,
            "dtype-call",
            changes,
            f"cast with tl.cast, not by calling the dtype: {program.parsed.code(changes[0][0])} and "
            f"{len(changes) - 1} more",
            "a dtype called as a function",
        )


# -- a grid that is a number ---------------------------------------------------------------------------


def _scalar(expr: ast.expr, site: LaunchSite) -> bool:
    """Whether a grid expression is a number: arithmetic, `triton.cdiv(...)`, `x.numel()`, or a name the launch's
    function last bound to one of those."""
    if isinstance(expr, ast.Name):
        bound = host_assignments(site.host, expr.id, before=site.call.lineno)
        return bool(bound) and _scalar(bound[-1], site)
    if isinstance(expr, ast.BinOp):
        return _scalar(expr.left, site) or _scalar(expr.right, site)
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, int) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.Call):
        return call_name(expr, last=True) in ("cdiv", "numel", "min", "max", "int", "next_power_of_2")
    return False


@operator("grid-tuple", "api-misuse")
def grid_tuple(program: Program) -> Iterator[Edit]:
    """`kernel[n](...)` with a number for the grid -> `kernel[(n,)](...)`, at every such launch (one edit)."""
    changes: list[tuple[ast.AST, str]] = [
        (site.grid, f"({program.parsed.code(site.grid)},)")
        for site in program.parsed.launches
        if site.grid is not None and isinstance(site.call.func, ast.Subscript) and _scalar(site.grid, site)
    ]
    if changes:
        yield from _rewrite(
            program,
            "grid-tuple",
            changes,
            f"the grid `{program.parsed.code(changes[0][0])}` as a one-axis tuple",
            "a launch grid that is a number, not a tuple",
        )


# -- imports ------------------------------------------------------------------------------------


def _unbound_reads(program: Program) -> set[str]:
    """Names the file reads and binds nowhere (no assignment, definition, parameter or import), builtins aside."""
    parsed = program.parsed
    bound = set(parsed.aliases)
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    read = {n.id for n in ast.walk(parsed.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return {name for name in read - bound if not hasattr(builtins, name)}


def missing_imports(program: Program) -> list[str]:
    """Conventional module names the file reads but never binds, in `_IMPORTS`' order."""
    unbound = _unbound_reads(program)
    return [name for name in _IMPORTS if name in unbound]


def _after_imports(program: Program, lines: str) -> tuple[int, str]:
    """The file with `lines` put after its last top-level import (or its docstring), and that statement's line."""
    body = program.parsed.tree.body
    imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
    docstring = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else []
    after = (imports or docstring or [None])[-1]
    if after is None:
        return 1, lines + program.text
    end = program.parsed.span(after)[1]
    newline = program.text.find("\n", end)
    at = newline + 1 if newline >= 0 else len(program.text)
    return after.lineno, program.text[:at] + ("" if newline >= 0 else "\n") + lines + program.text[at:]


@operator("missing-import", "api-misuse")
def missing_import(program: Program) -> Iterator[Edit]:
    """Import each conventional module the file reads and never binds, after its last top-level import."""
    names = missing_imports(program)
    if not names:
        return
    line, text = _after_imports(program, "".join(f"{_IMPORTS[n]}\n" for n in names))
    yield Edit(
        "missing-import",
        "api-misuse",
        line,
        f"import {', '.join(names)}: the file uses {'them' if len(names) > 1 else 'it'} and never imports it",
        text,
        f"`{'`, `'.join(names)}` read but never imported",
        grounded=True,
    )


def task_globals(program: Program) -> dict[str, str]:
    """The task's constants (kope.bugs.reference's `task_constants`) the file reads and never binds (`batch_size`,
    which the reference's own `__init__` may read as a global), each with the task's statement that binds it."""
    unbound = _unbound_reads(program) - set(_IMPORTS)
    if not unbound or not program.reference:
        return {}
    return {name: bound for name, bound in task_constants(program.reference).items() if name in unbound}


@operator("task-global", "api-misuse")
def task_global(program: Program) -> Iterator[Edit]:
    """Bind each task constant the file reads and never binds the way the task does (`batch_size = 256`, after the
    imports: "name 'batch_size' is not defined"). Kope's cases give a copy of the task's own value the case's value,
    so the copy follows every case's sizes."""
    found = task_globals(program)
    if not found:
        return
    line, text = _after_imports(program, "".join(f"{statement}\n" for statement in found.values()))
    names = list(found)
    yield Edit(
        "task-global",
        "api-misuse",
        line,
        f"bind {', '.join(names)} as the task does: the file reads {'them' if len(names) > 1 else 'it'} as a global "
        "and never binds it",
        text,
        f"`{'`, `'.join(names)}` read but bound only in the task",
        grounded=True,
    )


# -- helpers the kernels call without @triton.jit ----------------------------------------------------


def _unjitted_helpers(program: Program) -> list[ast.FunctionDef]:
    """Module-level functions without a decorator that a kernel (or such a helper) calls and that compute with
    `triton.language` and nothing of PyTorch: the interpreter runs them, the GPU compiler refuses them."""
    parsed = program.parsed
    plain = {
        node.name: node
        for node in parsed.tree.body
        if isinstance(node, ast.FunctionDef) and not node.decorator_list and _triton_only(program, node)
    }
    found: dict[str, ast.FunctionDef] = {}
    callers: list[ast.FunctionDef] = list(parsed.kernels)
    while callers:
        caller = callers.pop()
        for node in ast.walk(caller):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in plain:
                helper = plain[node.func.id]
                if helper.name not in found:
                    found[helper.name] = helper
                    callers.append(helper)
    return sorted(found.values(), key=lambda f: f.lineno)


def _jit_spelling(program: Program) -> str:
    """How the file spells `triton.jit` on its kernels (`triton.jit`, `jit`...)."""
    for kernel in program.parsed.kernels:
        for decorator in kernel.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if program.parsed.path_of(target) == "triton.jit":
                return program.parsed.code(target)
    return "triton.jit"


def _triton_only(program: Program, function: ast.FunctionDef) -> bool:
    paths = [program.parsed.path_of(n) for n in ast.walk(function) if isinstance(n, ast.Attribute | ast.Name)]
    return any(p.startswith("triton.language.") for p in paths) and not any(p.startswith("torch") for p in paths)


@operator("helper-jit", "api-misuse")
def helper_jit(program: Program) -> Iterator[Edit]:
    """`@triton.jit` on every module-level helper a kernel calls without it (one edit)."""
    helpers = _unjitted_helpers(program)
    if not helpers:
        return
    text = program.text
    lines = text.splitlines(keepends=True)
    for helper in reversed(helpers):
        at = helper.lineno - 1
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        lines.insert(at, f"{indent}@{_jit_spelling(program)}\n")
    names = ", ".join(f"`{h.name}`" for h in helpers)
    yield Edit(
        "helper-jit",
        "api-misuse",
        helpers[0].lineno,
        f"`@triton.jit` on {names}: a kernel calls {'them' if len(helpers) > 1 else 'it'}",
        "".join(lines),
        f"{names} called from a kernel without `@triton.jit` (the GPU compiler refuses it)",
        grounded=True,
    )


# -- a function defined inside a kernel ----------------------------------------------------------------------

_BUILTINS = frozenset(dir(builtins))


def _free_names(function: ast.FunctionDef, known: set[str]) -> list[str] | None:
    """The names a nested function reads from the function around it (neither its parameters, names it binds, the
    module's nor builtins), in order of first reading; None where it takes `*args`, `**kwargs`, keyword-only
    parameters or defaults (the names passed after its own arguments would land on them)."""
    if function.args.vararg or function.args.kwarg or function.args.kwonlyargs or function.args.defaults:
        return None
    params = {a.arg for a in [*function.args.posonlyargs, *function.args.args]}
    bound = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    read = [
        n.id
        for stmt in function.body
        for n in ast.walk(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    ]
    return [n for n in dict.fromkeys(read) if n not in params | bound | known and n not in _BUILTINS]


@operator("nested-jit", "api-misuse")
def nested_jit(program: Program) -> Iterator[Edit]:
    """A function defined inside a kernel (`def load_u(r, c): ...` in a `@triton.jit` body: Triton's compiler stops
    on it, "StopIteration") moved out, before the kernel, as a `@triton.jit` function of its own: the kernel's names
    it reads become parameters (the kernel's `tl.constexpr` ones stay constexpr), passed at each call
    (`load_u(0, 1)` -> `load_u(0, 1, w_ptr, co)`). One edit per kernel, every such function at once."""
    known = _module_names(program)
    for kernel in program.kernels:
        nested = [n for n in ast.walk(kernel) if isinstance(n, ast.FunctionDef) and n is not kernel]
        if not nested or any(n.name in known for n in nested):
            continue
        constexprs = set(constexprs_of(kernel))
        changes: list[tuple[ast.AST, str]] = []
        hoisted: list[str] = []
        for function in nested:
            free = _free_names(function, known | {n.name for n in nested})
            calls = [
                c
                for c in ast.walk(kernel)
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == function.name
            ]
            if free is None or not calls or any(c.keywords for c in calls):
                break
            params = [program.code(a) for a in [*function.args.posonlyargs, *function.args.args]]
            params += [f"{n}: tl.constexpr" if n in constexprs else n for n in free]
            body = textwrap.dedent(
                "".join(program.text.splitlines(keepends=True)[function.body[0].lineno - 1 : function.end_lineno])
            )
            signature = f"@{_jit_spelling(program)}\ndef {function.name}({', '.join(params)}):\n"
            hoisted.append(f"{signature}{textwrap.indent(body, '    ')}\n\n")
            changes.append((function, "pass"))
            for call in calls if free else []:
                changes.append((call, f"{program.code(call)[:-1]}{', ' if call.args else ''}{', '.join(free)})"))
        else:
            edited = program.replace_all(changes)
            lines = edited.splitlines(keepends=True)
            at = min([kernel.lineno, *(d.lineno for d in kernel.decorator_list)]) - 1
            text = "".join(lines[:at]) + "".join(hoisted) + "".join(lines[at:])
            names = ", ".join(f"`{f.name}`" for f in nested)
            yield Edit(
                "nested-jit",
                "api-misuse",
                nested[0].lineno,
                f"{names}, defined inside `{kernel.name}`: moved out as `@triton.jit` function(s)",
                text,
                f"{names}: a function defined inside a kernel, which Triton's compiler refuses",
                grounded=True,
            )


# -- `continue` in a kernel's loop ------------------------------------------------------------------------


def _tail_blocks(body: list[ast.stmt], top: bool = True) -> Iterator[tuple[list[ast.stmt], bool]]:
    """A loop's body, and the blocks of the `if` that ends it (and of the `if` that ends those...), with whether
    each is the body itself: skipping the rest of such a block skips the rest of the iteration."""
    yield body, top
    last = body[-1] if body else None
    if isinstance(last, ast.If):
        for block in (last.body, last.orelse):
            yield from _tail_blocks(block, False)


def _skips(program: Program) -> list[tuple[ast.If, list[ast.stmt]]]:
    """In a kernel's loops: `if C: continue` (or, in the loop's body itself, `if C: break`) with the statements
    after it, where nothing follows in the iteration (the skip's block ends the body, or ends an `if` that ends
    it)."""
    found: list[tuple[ast.If, list[ast.stmt]]] = []
    for kernel in program.parsed.kernels:
        for loop in ast.walk(kernel):
            if not isinstance(loop, ast.For | ast.While):
                continue
            for block, top in _tail_blocks(loop.body):
                for index, statement in enumerate(block):
                    if (
                        isinstance(statement, ast.If)
                        and not statement.orelse
                        and len(statement.body) == 1
                        and isinstance(statement.body[0], ast.Continue | (ast.Break if top else ast.Continue))
                    ):
                        found.append((statement, block[index + 1 :]))
                        break  # one a block: the next is inside the rest, a later round's
    return found


@operator("skip-continue", "api-misuse")
def skip_continue(program: Program) -> Iterator[Edit]:
    """`if C: continue` then the rest of the loop's body -> `if not (C):` around the rest (Triton's compiler has no
    `continue`); every such loop at once (one edit). `if C: break` the same way: the loop runs on and does nothing
    where it would have stopped, which is the same wherever C, once true, stays true (`k + start >= end` over a
    rising `k`); the cases judge the rest."""
    pairs = _skips(program)
    spans = [(skip.lineno, (rest[-1].end_lineno if rest else skip.end_lineno) or skip.lineno) for skip, rest in pairs]
    found = [  # the outermost: one inside another's rest would move under that edit (a later round's)
        pair for pair, (first, _) in zip(pairs, spans, strict=True) if not any(a < first <= b for a, b in spans)
    ]
    if not found:
        return
    lines = program.text.splitlines(keepends=True)
    for skip, rest in sorted(found, key=lambda pair: -pair[0].lineno):
        first, last = skip.lineno - 1, (rest[-1].end_lineno if rest else skip.end_lineno) or skip.lineno
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        condition = program.parsed.code(skip.test)
        body = [f"    {line}" if line.strip() else line for line in lines[(skip.end_lineno or skip.lineno) : last]]
        guard = [f"{indent}if not ({condition}):\n"] if rest else []
        lines[first:last] = guard + body
    yield Edit(
        "skip-continue",
        "api-misuse",
        found[0][0].lineno,
        "the rest of the loop under `if not (...)` instead of `continue` or `break`",
        "".join(lines),
        "`continue` or `break` in a kernel's loop (the GPU compiler has neither)",
        grounded=True,
    )


# -- autotune configs written as dicts --------------------------------------------------------------------

_CONFIG_OPTIONS = frozenset({"num_warps", "num_stages", "num_ctas", "maxnreg"})
"""Keys of a config dict that are `triton.Config`'s own arguments, not meta-parameters."""


def _config_list(program: Program, decorator: ast.Call) -> ast.List | None:
    """The list literal an autotune's `configs` is: given there, or a name bound to one above it."""
    given = autotune_configs(decorator, program.parsed.tree)
    return given if isinstance(given, ast.List) else None


@operator("config-dict", "api-misuse")
def config_dict(program: Program) -> Iterator[Edit]:
    """An autotune's configs written as dicts ("'dict' object has no attribute 'kwargs'"): each a `triton.Config` of
    its meta-parameters, with `num_warps` / `num_stages` as that config's own arguments (one edit)."""
    parsed = program.parsed
    spelled = _jit_spelling(program).rsplit(".", 1)
    config = f"{spelled[0]}.Config" if len(spelled) == 2 else "triton.Config"
    changes: list[tuple[ast.AST, str]] = []
    for kernel in parsed.kernels:
        tune = parsed.autotune(kernel)
        listed = _config_list(program, tune) if tune is not None else None
        for element in listed.elts if listed is not None else []:
            if not isinstance(element, ast.Dict) or not all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in element.keys
            ):
                continue
            pairs = [(k.value, v) for k, v in zip(element.keys, element.values, strict=True)]  # type: ignore[union-attr]
            meta = ", ".join(f"{key!r}: {parsed.code(value)}" for key, value in pairs if key not in _CONFIG_OPTIONS)
            own = "".join(f", {key}={parsed.code(value)}" for key, value in pairs if key in _CONFIG_OPTIONS)
            changes.append((element, f"{config}({{{meta}}}{own})"))
    if changes:
        yield from _rewrite(
            program,
            "config-dict",
            changes,
            f"the autotune's {len(changes)} config dict(s) as `triton.Config`s",
            "autotune configs written as dicts, where Triton reads `triton.Config`s",
        )


# -- types the compiler's message states -----------------------------------------------------------

_CARRIED = re.compile(r"Loop-carried variable (\w+) has initial type (.+?) but is re-assigned to (.+?) in loop")
_BRANCHED = re.compile(
    r"initial value for `(\w+)` is of type (.+?), but the (?:then|else) block redefines it as (.+?)'"
)
_AT_LINE = re.compile(r"\(candidate line (\d+):")
_MESSAGE_CHARS = 2000
_TYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64", "i1": "int1"}


def _message_type(text: str) -> tuple[str, list[int]] | None:
    """A Triton type as its messages print it (`fp32`, `<['128', '4'], fp32>`, `fp32[constexpr[16], constexpr[4]]`):
    the `tl` dtype's name and the block's dims (none for a scalar); None for what is not such a type."""
    text = text.strip()
    block = re.fullmatch(r"<\[([^\]]*)\],\s*(\w+)>", text)
    bracketed = re.fullmatch(r"(\w+)\[(.*)\]", text)
    if block is not None:
        dims_text, name = block.group(1), block.group(2)
        dims = [int(d) for d in re.findall(r"\d+", dims_text)]
    elif bracketed is not None:
        name, dims = bracketed.group(1), [int(d) for d in re.findall(r"constexpr\[(\d+)\]", bracketed.group(2))]
    else:
        name, dims = text, []
    name = _TYPE_NAMES.get(name, name)
    return (name, dims) if name in _DTYPES or name == "int1" else None


def _carried(program: Program) -> tuple[ast.FunctionDef, ast.stmt, str, tuple[str, list[int]], list[int]] | None:
    """What the evaluation's error says of a loop-carried (or branch-redefined) variable: the kernel, the statement
    the compiler names, the variable, the type it takes there, and the dims it started with."""
    error = program.error[:_MESSAGE_CHARS]  # the candidate's code can write the message: read a bounded part
    found = _CARRIED.search(error) or _BRANCHED.search(error)
    at = _AT_LINE.search(error)
    if found is None or at is None:
        return None
    start, became = _message_type(found.group(2)), _message_type(found.group(3))
    line = int(at.group(1))  # the kernel is the one holding the line (the message may name an autotuned alias)
    kernel = next((k for k in program.parsed.kernels if k.lineno <= line <= (k.end_lineno or k.lineno)), None)
    stmt = next(
        (s for s in ast.walk(kernel) if isinstance(s, ast.For | ast.While | ast.If) and s.lineno == line), None
    ) if kernel is not None else None  # fmt: skip
    if start is None or became is None or kernel is None or stmt is None:
        return None
    return kernel, stmt, found.group(1), became, start[1]


def _initial_value(kernel: ast.FunctionDef, stmt: ast.stmt, name: str) -> ast.expr | None:
    """The value `name` last takes before `stmt` begins, outside it (its initial value there)."""
    end = stmt.end_lineno or stmt.lineno
    values = [
        node.value
        for node in ast.walk(kernel)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and node.value is not None
        and node.lineno < stmt.lineno
        and not (stmt.lineno <= node.lineno <= end)
        and [t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)]
        == [name]
    ]
    return max(values, key=lambda v: (v.lineno, v.col_offset)) if values else None


def _launch_value(program: Program, kernel: ast.FunctionDef, size: str) -> int | None:
    """The number a launch passes for a size parameter, where it passes a literal."""
    passed = program.launch_arguments(kernel).get(size)
    return passed.value if isinstance(passed, ast.Constant) and isinstance(passed.value, int) else None


def _shapes(program: Program, kernel: ast.FunctionDef, dims: list[int]) -> list[str]:
    """Shapes the kernel writes with its own sizes that can be these dims: the shapes of its `tl.zeros` / `tl.full`,
    and for one dim each size a `tl.arange` ranges over (a size whose value a launch passes as a literal only where
    that is the dim)."""
    found: list[str] = []
    for node in ast.walk(kernel):
        if not isinstance(node, ast.Call):
            continue
        path = program.parsed.path_of(node.func)
        if path in ("triton.language.zeros", "triton.language.full") and node.args:
            shape = node.args[0]
            if isinstance(shape, ast.Tuple | ast.List) and len(shape.elts) == len(dims):
                items = ", ".join(program.parsed.code(e) for e in shape.elts)
                found.append(f"({items},)" if len(dims) == 1 else f"({items})")
        elif path == "triton.language.arange" and len(node.args) == 2 and len(dims) == 1:
            size = node.args[1]
            value = _launch_value(program, kernel, size.id) if isinstance(size, ast.Name) else None
            literal = size.value if isinstance(size, ast.Constant) else value
            if literal is None or literal == dims[0]:
                found.append(f"({program.parsed.code(size)},)")
    return list(dict.fromkeys(found))[:6]


@operator("carried-type", "api-misuse")
def carried_type(program: Program) -> Iterator[Edit]:
    """The initial value of a variable a loop (or a branch) gives another type, made that type from the start, as
    the compiler's message states it ("Loop-carried variable acc has initial type int32 but is re-assigned to
    <['128'], fp32> in loop"): `acc = 0` becomes `acc = tl.full((BLOCK,), 0, tl.float32)`. A scalar's type is the
    message's; a block's shape is one the kernel writes (each such shape one edit). A block that changes its shape
    is a shape bug, not this."""
    carried = _carried(program)
    if carried is None:
        return
    kernel, stmt, name, (dtype, dims), start_dims = carried
    value = _initial_value(kernel, stmt, name)
    if value is None or (start_dims and start_dims != dims):
        return
    text = program.parsed.code(value)
    literal = isinstance(value, ast.Constant) or (
        isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant)
    )
    if start_dims or not dims:
        made = [f"tl.full((), {text}, tl.{dtype})" if literal and not dims else f"tl.cast({text}, tl.{dtype})"]
    else:
        made = [f"tl.full({shape}, {text}, tl.{dtype})" for shape in _shapes(program, kernel, dims)]
    for new in made:
        yield Edit(
            "carried-type",
            "api-misuse",
            value.lineno,
            f"start `{name}` as the {'block' if dims else 'scalar'} of tl.{dtype} it becomes: `{new}`",
            program.replace(value, new),
            f"{name}: the compiler says its type changes in the loop or branch at line {stmt.lineno}",
            grounded=True,
        )


def _data_pointers(value: ast.expr, site: LaunchSite, depth: int = 3) -> list[ast.Call]:
    """The `t.data_ptr()` calls a launch argument is: the call itself, either branch of a conditional
    (`b.data_ptr() if b is not None else 0`), or a name the host bound to those. Not one inside arithmetic
    (`x.data_ptr() + offset`): the tensor there would be added to, not addressed."""
    if isinstance(value, ast.Name):
        bound = host_assignments(site.host, value.id, before=site.call.lineno) if depth > 0 else []
        return [c for v in bound for c in _data_pointers(v, site, depth - 1)]
    if isinstance(value, ast.IfExp):
        return [*_data_pointers(value.body, site, depth), *_data_pointers(value.orelse, site, depth)]
    called = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "data_ptr"
    return [value] if called and isinstance(value, ast.Call) and not value.args and not value.keywords else []


@operator("data-ptr", "api-misuse")
def data_ptr(program: Program) -> Iterator[Edit]:
    """Every `t.data_ptr()` a launch passes, passed as the tensor `t`: Triton takes a tensor for a pointer and an
    integer for an integer ("Unsupported ptr type <['128'], int64> in `tl.load`"), one edit."""
    changes: dict[int, tuple[ast.AST, str]] = {}
    for site in program.parsed.launches:
        for value in site_arguments(site).values():
            for call in _data_pointers(value, site):
                assert isinstance(call.func, ast.Attribute)
                changes[id(call)] = (call, program.parsed.code(call.func.value))
    named = sorted({text for _, text in changes.values()})[:3]
    yield from _rewrite(
        program,
        "data-ptr",
        list(changes.values()),
        f"pass {', '.join(f'`{n}`' for n in named)} as tensors, not `.data_ptr()`",
        f"{', '.join(named)}: an address passed as an integer, which a kernel cannot load from",
    )


@operator("store-lane", "api-misuse")
def store_lane(program: Program) -> Iterator[Edit]:
    """A block stored through one address ("Value argument cannot be block type if pointer argument is not a
    block": a running value kept as a block of one, `tl.full((1,), ...)`, written to `out_ptr + row`): the store's
    address becomes a block of one lane, `out_ptr + row + tl.arange(0, 1)`; read from the error's line."""
    line = program.error_line()
    if line is None or "cannot be block type if pointer argument is not a block" not in program.error:
        return
    changes: list[tuple[ast.AST, str]] = []
    for _, node in program.kernel_nodes():
        if not (isinstance(node, ast.Call) and call_name(node, last=True) == "store"):
            continue
        if not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        pointer = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pointer"), None)
        if pointer is not None:
            changes.append((pointer, f"{program.parsed.code(pointer)} + tl.arange(0, 1)"))
    yield from _rewrite(
        program,
        "store-lane",
        changes[:1],
        "store through a block of one lane: the value is a block of one",
        "a block stored through a single address",
    )


def _needs_axis(path: str, given: int) -> bool:
    """Whether the installed Triton's `tl.<name>` has an `axis` parameter without a default (`tl.reduce_or`) that
    `given` positional arguments leave out."""
    import inspect

    import triton.language as language

    if not path.startswith("triton.language."):
        return False
    function = getattr(language, path.rsplit(".", 1)[-1], None)
    function = getattr(function, "fn", function)
    try:
        parameters = list(inspect.signature(function).parameters.values()) if callable(function) else []
    except (TypeError, ValueError):
        return False
    at = next((i for i, p in enumerate(parameters) if p.name == "axis"), None)
    return at is not None and at >= given and parameters[at].default is inspect.Parameter.empty


@operator("axis-required", "api-misuse")
def axis_required(program: Program) -> Iterator[Edit]:
    """A reduction called without the `axis` Triton requires of it (`tl.reduce_or(mask)`: "missing a required
    argument: 'axis'"), over the whole block: `axis=None` (one edit)."""
    changes: list[tuple[ast.AST, str]] = []
    for kernel in program.parsed.kernels:
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and len(node.args) == 1) or any(k.arg == "axis" for k in node.keywords):
                continue
            if _needs_axis(program.parsed.path_of(node.func), len(node.args)):
                inner = ", ".join([program.parsed.code(node.args[0]), *map(program.parsed.code, node.keywords)])
                changes.append((node, f"{program.parsed.code(node.func)}({inner}, axis=None)"))
    yield from _rewrite(
        program,
        "axis-required",
        changes,
        f"reduce over the whole block: {program.parsed.code(changes[0][0]) if changes else ''} with `axis=None`",
        "a reduction called without the axis Triton requires",
    )


_HOST_CASTS = {"float": "tl.float32", "int": "tl.int32"}


def _module_names(program: Program) -> set[str]:
    """Names the file's top level binds (globals a kernel may read as constants, or that shadow a builtin)."""
    names: set[str] = set()
    for stmt in program.parsed.tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


@operator("host-cast", "api-misuse")
def host_cast(program: Program) -> Iterator[Edit]:
    """Python's `float(x)` / `int(x)` in a kernel over a runtime value ("float() argument must be a string or a real
    number, not 'tensor'"), written `tl.cast(x, tl.float32)` / `tl.cast(x, tl.int32)`; one edit. Over literals and
    `tl.constexpr` parameters alone Python's cast is what the compiler folds, and stays. Where the run stopped on
    "'int' object has no attribute 'to'" (Triton makes an integer argument of 1 a constant), a scalar parameter's
    `n.to(tl.float32)` is written `tl.cast(n, tl.float32)` too."""
    changes: list[tuple[ast.AST, str]] = []
    module = _module_names(program)
    for kernel in program.parsed.kernels:
        constants = set(constexprs_of(kernel)) | module
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1):
                continue
            if node.func.id not in _HOST_CASTS or node.keywords or node.func.id in module:
                continue
            names = {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
            if names - constants:
                changes.append((node, f"tl.cast({program.parsed.code(node.args[0])}, {_HOST_CASTS[node.func.id]})"))
        if "object has no attribute 'to'" in program.error:  # an integer argument of 1 is a constant to Triton
            scalars = set(program.scalars(kernel))
            for node in ast.walk(kernel):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"):
                    continue
                value = node.func.value
                if isinstance(value, ast.Name) and value.id in scalars and len(node.args) == 1 and not node.keywords:
                    changes.append((node, f"tl.cast({value.id}, {program.parsed.code(node.args[0])})"))
    yield from _rewrite(
        program,
        "host-cast",
        changes,
        f"cast with `tl.cast`: {program.parsed.code(changes[0][0]) if changes else ''}",
        "Python's float() / int() over a value the kernel computes at run time",
    )


# -- a grid of more than three axes ---------------------------------------------------------------------

_GRID_AXES = 3
"""Triton launches at most three grid axes ("program_id axis must be 0, 1, or 2 but got 3")."""

_MAX_DEPTH = 4

_OPERATOR_TEXT: dict[type[ast.operator], str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//"}


def _axis_call(program: Program, node: ast.AST) -> tuple[str, int] | None:
    """(`program_id` or `num_programs`, axis) of a `tl.program_id(k)` / `tl.num_programs(k)` call."""
    if not isinstance(node, ast.Call):
        return None
    name = program.parsed.path_of(node.func).rsplit(".", 1)[-1]
    if name not in ("program_id", "num_programs"):
        return None
    value = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return name, value.value
    return None


def _wide_grid(site: LaunchSite) -> tuple[ast.Tuple | ast.List, str | None] | None:
    """A launch's grid of four axes or more (written there, bound to its name, or a `lambda META: (...)`'s body),
    with the lambda's parameter."""
    grid = launch_grid(site)
    meta = None
    if isinstance(grid, ast.Lambda) and len(grid.args.args) == 1:
        meta, grid = grid.args.args[0].arg, grid.body
    wide = isinstance(grid, ast.Tuple | ast.List) and len(grid.elts) > _GRID_AXES
    if wide and isinstance(grid, ast.Tuple | ast.List) and not any(isinstance(e, ast.Starred) for e in grid.elts):
        return grid, meta
    return None


def _in_kernel(site: LaunchSite, expr: ast.expr, meta: str | None, depth: int = 0) -> str | None:
    """A grid axis's count written with the kernel's own names: an argument the launch passes becomes the parameter
    it is passed for, `META["BLOCK"]` the meta-parameter, a host name the value it was bound to; None where a part
    has no counterpart in the kernel."""
    passed = {ast.unparse(value): name for name, value in site_arguments(site).items()}
    params = set(params_of(site.kernel))
    if ast.unparse(expr) in passed:
        return passed[ast.unparse(expr)]
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return repr(expr.value)
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id == meta:
        key = expr.slice
        ok = isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value in params
        return str(key.value) if ok and isinstance(key, ast.Constant) else None
    if isinstance(expr, ast.Name) and depth < _MAX_DEPTH:
        bound = host_assignments(site.host, expr.id, before=site.call.lineno)
        return _in_kernel(site, bound[-1], meta, depth + 1) if bound else None
    if isinstance(expr, ast.BinOp) and type(expr.op) in _OPERATOR_TEXT:
        left, right = _in_kernel(site, expr.left, meta, depth), _in_kernel(site, expr.right, meta, depth)
        if left is None or right is None:
            return None
        return f"({left} {_OPERATOR_TEXT[type(expr.op)]} {right})"
    if isinstance(expr, ast.Call) and call_name(expr, last=True) == "cdiv" and len(expr.args) == 2:
        parts = [_in_kernel(site, a, meta, depth) for a in expr.args]
        return None if None in parts else f"tl.cdiv({parts[0]}, {parts[1]})"
    return None


def _folded(program: Program, kernel: ast.FunctionDef, counts: list[str]) -> list[tuple[ast.AST, str]]:
    """The kernel's program ids and program counts with axes 3.. folded into axis 0 (axis 0 the outermost): axis
    k >= 3 is `(pid0 // <counts after k>) % <count k>`, axis 0 is `pid0 // <every folded count>`. Each count is an
    atom (`_in_kernel` parenthesises what it builds)."""
    n = _GRID_AXES + len(counts)
    changes: list[tuple[ast.AST, str]] = []
    for node in ast.walk(kernel):
        found = _axis_call(program, node)
        if found is None or not isinstance(node, ast.Call):
            continue
        name, axis = found
        pid = f"{program.parsed.code(node.func)}(0)"
        after = " * ".join(counts[axis - _GRID_AXES + 1 :]) if axis >= _GRID_AXES else ""
        if axis == 0:
            changes.append((node, f"({pid} // ({' * '.join(counts)}))"))
        elif axis >= n:
            return []
        elif axis >= _GRID_AXES and name == "num_programs":
            changes.append((node, counts[axis - _GRID_AXES]))
        elif axis >= _GRID_AXES:
            inner = f"({pid} // ({after}))" if after else pid
            changes.append((node, f"({inner} % {counts[axis - _GRID_AXES]})"))
    return changes


@operator("grid-axes", "api-misuse")
def grid_axes(program: Program) -> Iterator[Edit]:
    """A launch grid of four axes or more, read with `tl.program_id(3)`: Triton's GPU compiler refuses it ("program_id
    axis must be 0, 1, or 2 but got 3"). Axes 3.. are folded into axis 0 (the one whose size a GPU allows to be
    largest): the grid `(a, b, c, d, e)` becomes `(a * d * e, b, c)`, and the kernel recovers each id from
    `tl.program_id(0)` with the folded axes' counts, written with its own parameters (`tl.cdiv(W, BLOCK_W)` for the
    launch's `triton.cdiv(w_out, META["BLOCK_W"])`); one edit, where every launch of such a kernel gives the same
    counts."""
    changes: list[tuple[ast.AST, str]] = []
    for kernel in program.parsed.kernels:
        axes = [a for node in ast.walk(kernel) if (f := _axis_call(program, node)) and (a := f[1]) >= _GRID_AXES]
        sites = [site for site in program.parsed.launches if site.kernel is kernel]
        if not axes or not sites:
            continue
        grids = [_wide_grid(site) for site in sites]
        counts = [
            [_in_kernel(site, e, found[1]) for e in found[0].elts[_GRID_AXES:]] if found else None
            for site, found in zip(sites, grids, strict=True)
        ]
        first = counts[0]
        if first is None or None in first or any(c != first for c in counts) or max(axes) >= len(first) + _GRID_AXES:
            continue
        folded = _folded(program, kernel, [str(c) for c in first])
        if not folded:
            continue
        changes += folded
        for found in grids:
            assert found is not None
            elts = [program.parsed.code(e) for e in found[0].elts]
            outer = " * ".join(f"({e})" for e in [elts[0], *elts[_GRID_AXES:]])
            changes.append((found[0], f"({outer}, {', '.join(elts[1:_GRID_AXES])})"))
    yield from _rewrite(
        program,
        "grid-axes",
        list({id(node): (node, text) for node, text in changes}.values()),
        "fold the grid's axes 3.. into axis 0 (Triton launches three axes)",
        "a launch grid of more than three axes, read with tl.program_id(3)",
    )


# -- Triton's device functions called on the host -------------------------------------------------------

_HOST_FORMS = {"maximum": "max", "minimum": "min"}
"""Device functions whose host counterpart is Python's own, not `triton`'s."""


def _host_form(name: str) -> str | None:
    """What host code calls for `tl.<name>`: `triton.<name>` where Triton has it as a plain function (`cdiv`,
    `next_power_of_2`), a builtin for the few in `_HOST_FORMS`; None for the rest (a load has no host form)."""
    import triton
    from triton.runtime.jit import JITFunction

    if name in _HOST_FORMS:
        return _HOST_FORMS[name]
    found = getattr(triton, name, None)
    return f"triton.{name}" if callable(found) and not isinstance(found, JITFunction) else None


@operator("host-jit-call", "api-misuse")
def host_jit_call(program: Program) -> Iterator[Edit]:
    """`tl.cdiv(M, BLOCK_M)` in host code: a `@triton.jit` function called outside a kernel ("Cannot call @triton.jit'd
    outside of the scope of a kernel"), written with its host form (`triton.cdiv(M, BLOCK_M)`, `max(a, b)` for
    `tl.maximum`); one edit."""
    changes: list[tuple[ast.AST, str]] = []
    helpers = [(h.lineno, h.end_lineno or h.lineno) for h in _unjitted_helpers(program)]  # device code, unjitted
    for node in program.host_nodes():
        if not isinstance(node, ast.Call) or any(a <= node.lineno <= b for a, b in helpers):
            continue
        path = program.parsed.path_of(node.func)
        if not path.startswith("triton.language."):
            continue
        form = _host_form(path.rsplit(".", 1)[-1])
        if form is not None:
            changes.append((node.func, form))
    yield from _rewrite(
        program,
        "host-jit-call",
        changes,
        f"call Triton's device functions' host forms: {', '.join(sorted({t for _, t in changes})[:4])}",
        "a tl. function (a device function) called in host code",
    )


# -- a loop over a block ----------------------------------------------------------------------------------


@operator("arange-loop", "api-misuse")
def arange_loop(program: Program) -> Iterator[Edit]:
    """`for c in tl.arange(0, n):` in a kernel: the interpreter iterates the block's lanes, Triton's GPU compiler
    refuses it ("Only `range` and `static_range` iterators are currently supported"). The loop runs over `range(0, n)`,
    the same numbers one at a time; one edit."""
    changes: list[tuple[ast.AST, str]] = []
    for kernel in program.parsed.kernels:
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)):
                continue
            call = node.iter
            if program.parsed.path_of(call.func) == "triton.language.arange" and len(call.args) == 2:
                changes.append((call.func, "range"))
    yield from _rewrite(
        program,
        "arange-loop",
        changes,
        "loop over `range(...)`, not over a block's lanes `tl.arange(...)`",
        "a kernel's loop iterates a tl.arange block",
    )


# -- a module attribute registered over a plain one -----------------------------------------------------


def _self_target(node: ast.AST) -> str | None:
    """`NAME` of an assignment `self.NAME = ...` (one target)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            return target.attr
    return None


def _plain(value: ast.expr) -> bool:
    """A value that is no tensor: a name, a constant, a comparison or boolean of them."""
    return all(isinstance(n, ast.Name | ast.Constant | ast.BoolOp | ast.Compare | ast.UnaryOp | ast.boolop | ast.cmpop
                          | ast.unaryop | ast.expr_context) for n in ast.walk(value))  # fmt: skip


@operator("register-clash", "api-misuse")
def register_clash(program: Program) -> Iterator[Edit]:
    """`self.bias = bias` (a flag), then `self.register_parameter("bias", None)` (or `register_buffer`) in the same
    `__init__`: PyTorch refuses to register a name a plain attribute holds ("attribute 'bias' already exists"). The
    plain assignment goes: where the flag is true the parameter replaces it anyway, where false the name holds None,
    which reads false as the flag did. A tensor assigned first (a real clash of two tensors) is left alone."""
    changes: list[tuple[ast.AST, str]] = []
    for function in ast.walk(program.parsed.tree):
        if not (isinstance(function, ast.FunctionDef) and function.name == "__init__"):
            continue
        plain: dict[str, ast.stmt] = {}
        for stmt in function.body:
            target = _self_target(stmt)
            if target is not None and isinstance(stmt, ast.Assign) and _plain(stmt.value):
                plain[target] = stmt
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
                continue
            name = node.args[0]
            registers = node.func.attr in ("register_parameter", "register_buffer")
            if registers and isinstance(name, ast.Constant) and name.value in plain:
                earlier = plain.pop(name.value)
                if earlier.lineno < node.lineno:
                    changes.append((earlier, "pass"))
    yield from _rewrite(
        program,
        "register-clash",
        changes,
        "drop the plain attribute a registered parameter or buffer of the same name replaces",
        "a name set as a plain attribute, then registered as a parameter or buffer",
    )


_TOGETHER_ROUNDS = 6


@operator("api-together", "api-misuse")
def api_together(program: Program) -> Iterator[Edit]:
    """Every rule of Triton's API the kernel breaks, mended in one version: the first edit of each of this kind's
    operators, applied one after the other, the source read again after each, for a few rounds (a kernel that
    breaks three rules would otherwise take three rounds of the search, each paying for a full evaluation of a
    version that still does not run). The edits that read the compiler's message first (`carried-type`,
    `unknown-keyword`, `hint-call`: one applies to a message), while it still names the lines it read. Offered only
    where two edits or more go in."""
    own = [name for name, (_, fn) in OPERATORS.items() if fn.__module__ == __name__ and name != "api-together"]
    first = ("carried-type", "unknown-keyword", "hint-call")  # they read the error's lines
    order = [*first, *(name for name in own if name not in first)]
    current, made = program, []
    for round_ in range(_TOGETHER_ROUNDS):
        changed = False
        for name in order if round_ == 0 else own:
            found = next(iter(OPERATORS[name][1](current)), None)
            edited = Program.parse(found.source) if found is not None else None
            if found is None or edited is None or edited.text == current.text:
                continue
            current, changed = edited, True
            made.append(name)
        if not changed:
            break
    if len(made) >= 2:
        yield Edit(
            "api-together",
            "api-misuse",
            1,
            f"mend every broken rule of Triton's API at once: {', '.join(made)}",
            current.text,
            f"{len(made)} rules of Triton's API broken in one kernel",
            grounded=True,
        )


@recipe(
    "mend-api",
    "annotate tl.constexpr what must be constant, range over a power-of-two block, stop passing autotuned "
    "meta-parameters, import what the file uses, jit the helpers a kernel calls",
)
def mend_api(source: str) -> Iterator[str]:
    program = Program.parse(source)
    if program is not None:
        own = [name for name, (_, fn) in OPERATORS.items() if fn.__module__ == __name__ and name != "api-together"]
        yield from (edit.source for edit in edits(program, own))


# -- the mutation -------------------------------------------------------------------------------


@mutation
class ConstexprDropped(Mutation):
    name = "constexpr-dropped"
    label = "api-misuse"
    summary = "a block that a tl.arange ranges over loses its tl.constexpr annotation"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not isinstance(node, cst.Param) or context.kernel is None or node.annotation is None:
            return []
        if node.name.value not in context.kernel.constexprs or node.name.value not in context.kernel.aranged:
            return []
        return [node.with_changes(annotation=None)]
