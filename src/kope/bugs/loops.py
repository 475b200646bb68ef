"""Loop bounds: a loop's start and stop.

The bug kind's cues, recipes, edits and mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: loop-bound (a loop that steps by a block but reads one element a step is a loop-bound bug too: the
elements between its steps are never visited).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from kope.bugs.analysis import constant_value, names_in, names_made_from, params_of, statements
from kope.bugs.api import _tuned_keys
from kope.bugs.cue import Source, _kernel_loops, _kernels, cue, range_call
from kope.bugs.edit import Edit, Program, arange_names, edit_at, operator, program_id_names
from kope.bugs.mutation import Context, Mutation, binary, mutation, positional, range_args
from kope.bugs.recipe import _expr, _hit_lines, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


@cue(
    "loop-stops-early",
    "a kernel loop bound that stops short of the size: range(0, n - BLOCK, ...), (n // B) * B, n // B",
)
def loop_stops_early(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            call = range_call(loop)
            if call is None or not call.args:
                continue
            stop = call.args[1] if len(call.args) >= 2 else call.args[0]
            step = call.args[2] if len(call.args) >= 3 else None
            minus_step = (
                isinstance(stop, ast.BinOp)
                and isinstance(stop.op, ast.Sub)
                and step is not None
                and ast.unparse(stop.right) == ast.unparse(step)
                and constant_value(step) != 1.0
            )
            floored = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) for n in ast.walk(stop))
            if minus_step or floored:
                yield stop


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


class _FullRange(_LineTransformer):
    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.lines = lines

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        if self.line(original_node) not in self.lines or not isinstance(updated_node.iter, cst.Call):
            return updated_node
        call = updated_node.iter
        if call_name(call, last=True) not in ("range", "static_range") or not call.args:
            return updated_node
        index = 1 if len(call.args) >= 2 else 0
        stop = call.args[index].value
        fixed = _full_stop(stop)
        if fixed is None:
            return updated_node
        self.changed = True
        args = list(call.args)
        args[index] = args[index].with_changes(value=fixed)
        return updated_node.with_changes(iter=call.with_changes(args=args))


def _full_stop(stop: cst.BaseExpression) -> cst.BaseExpression | None:
    """`n - BLOCK` -> `n`; `(n // B) * B` -> `n`; `n // B` -> `tl.cdiv(n, B)`."""
    if isinstance(stop, cst.BinaryOperation):
        if isinstance(stop.operator, cst.Subtract):
            return stop.left.with_changes(lpar=[], rpar=[])
        if isinstance(stop.operator, cst.Multiply):
            for side in (stop.left, stop.right):
                if isinstance(side, cst.BinaryOperation) and isinstance(side.operator, cst.FloorDivide):
                    return side.left.with_changes(lpar=[], rpar=[])
        if isinstance(stop.operator, cst.FloorDivide):
            return cst.Call(
                func=_expr("tl.cdiv"), args=[cst.Arg(stop.left.with_changes(lpar=[], rpar=[])), cst.Arg(stop.right)]
            )
    return None


@recipe("full-loop-range", "make loops over blocks reach the end: range(0, n - B, B) / (n // B) * B -> range(0, n, B)")
def full_loop_range(source: str) -> Iterator[str]:
    lines = _hit_lines(source, "loop-stops-early")
    if lines:
        edited = _rewrite(source, _FullRange(lines))
        if edited is not None:
            yield edited


# -- the search's edits (repair operators) -----------------------------------------------------


def _range_calls(program: Program) -> Iterator[ast.Call]:
    for _, node in program.kernel_nodes():
        if (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and call_name(node.iter, last=True) in ("range", "static_range")
        ):
            yield node.iter


@operator("loop-bound", "loop-bound")
def loop_bound(program: Program) -> Iterator[Edit]:
    """A loop's stop without its trailing `- k` term, or one step further; a start other than 0 back to 0."""
    for call in _range_calls(program):
        args = call.args
        if not args:
            continue
        stop = args[1] if len(args) >= 2 else args[0]
        if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Sub):
            new = ast.unparse(stop.left)
            yield edit_at(program, "loop-bound", stop, new, f"loop stop `{program.code(stop)}` -> `{new}`")
        step = ast.unparse(args[2]) if len(args) >= 3 else "1"
        new = f"{ast.unparse(stop)} + {step}"
        yield edit_at(program, "loop-bound", stop, new, f"loop stop `{program.code(stop)}` -> `{new}`")
        if len(args) >= 2 and not (isinstance(args[0], ast.Constant) and args[0].value == 0):
            yield edit_at(program, "loop-bound", args[0], "0", f"loop start `{program.code(args[0])}` -> `0`")


def _arange_widths(kernel: ast.FunctionDef) -> set[str]:
    """The widths of the kernel's `tl.arange(0, W)` lanes, as written."""
    return {
        ast.unparse(n.args[1])
        for n in ast.walk(kernel)
        if isinstance(n, ast.Call) and call_name(n, last=True) == "arange" and len(n.args) == 2
    }


def _chunked_size(loop: ast.For, widths: set[str], positions: set[str]) -> tuple[str, str] | None:
    """The (size, block width) a loop over chunks walks: its body places a block at `c * BLOCK` (`idx = c * BLOCK +
    offs`), from no program's position (a program's own tile of several blocks, `pid * BLOCK * UNROLL + c * BLOCK`,
    is not the whole size), and bounds it by one size (`idx < S`) that the loop does not move; None where it bounds
    several or none."""
    var = loop.target.id if isinstance(loop.target, ast.Name) else None
    placed: dict[str, str] = {}
    for stmt in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if names_in(stmt.value) & positions:
                continue
            for node in ast.walk(stmt.value):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                    sides = {ast.unparse(node.left), ast.unparse(node.right)}
                    if var in sides and len(sides - {var}) == 1 and (sides - {var}) <= widths:
                        placed[stmt.targets[0].id] = (sides - {var}).pop()
    bounds = {
        (ast.unparse(node.comparators[0]), placed[node.left.id])
        for node in ast.walk(ast.Module(body=loop.body, type_ignores=[]))
        if isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Lt)
        and isinstance(node.left, ast.Name)
        and node.left.id in placed
        and var not in names_in(node.comparators[0])
        and not (names_in(node.comparators[0]) & set(placed))
    }
    return bounds.pop() if len(bounds) == 1 else None


@operator("block-count", "loop-bound")
def block_count(program: Program) -> Iterator[Edit]:
    """A loop over the chunks of a size that runs a count passed in (`for c in range(0, NUM_CHUNKS)`, the count
    worked out on the host from one block width) while its body places and masks a block of the kernel's own width
    (`idx = c * BLOCK + offs`, `idx < S`): the count becomes `tl.cdiv(S, BLOCK)`, right for every width, in every
    such loop of the kernel at once; grounded where the kernel's autotune varies that width (a count from the host
    matches one of its configs at most)."""
    for kernel in program.kernels:
        changes: list[tuple[ast.AST, str]] = []
        grounded = False
        tune = program.parsed.autotune(kernel)
        positions = names_made_from(kernel.body, program_id_names(kernel))
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)):
                continue
            args = node.iter.args
            if call_name(node.iter, last=True) != "range" or node.iter.keywords or not 1 <= len(args) <= 2:
                continue
            count = args[-1]
            if len(args) == 2 and constant_value(args[0]) != 0.0:
                continue
            if not (isinstance(count, ast.Name) and count.id in params_of(kernel)):
                continue
            if tune is not None and count.id in _tuned_keys(tune, program):
                continue  # a count the tuner sets, not one the host works out
            found = _chunked_size(node, _arange_widths(kernel), positions)
            if found is not None:
                changes.append((count, f"tl.cdiv({found[0]}, {found[1]})"))
                grounded = grounded or (tune is not None and found[1] in _tuned_keys(tune, program))
        if changes:
            old, new = program.code(changes[0][0]), changes[0][1]
            yield Edit(
                "block-count",
                "loop-bound",
                getattr(changes[0][0], "lineno", 0),
                f"loop count `{old}` -> `{new}` ({len(changes)} loop(s)): the chunks at the kernel's own block width",
                program.replace_all(changes),
                "a loop over chunks whose count comes from the host, not from the block width",
                grounded=grounded,
            )


def _simple_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a body, a block's header (a loop's range, a condition) standing for its block."""
    for stmt in statements(body):
        if isinstance(stmt, ast.If | ast.While):
            yield ast.Expr(stmt.test)
        elif isinstance(stmt, ast.For):
            yield ast.Expr(stmt.iter)
        elif not isinstance(stmt, ast.With):
            yield stmt


_BLOCK_CALLS = ("make_block_ptr", "advance", "make_tensor_descriptor", "load_tensor_descriptor")
"""Calls that place a whole block at a position (`offsets=(k, 0)`, `block_shape=(BLOCK_K, ...)`)."""


def _reads_one_element(statement: ast.stmt, derived: set[str], lanes: set[str]) -> bool:
    """A statement that uses the loop's position as one element's: no block's lanes beside it, no call of a helper
    it is passed to (which may walk the block), no constant added to it (`v + 1`: a loop over pairs)."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and node.id in lanes:
            return False
        if isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            passed = any(isinstance(n, ast.Name) and n.id in derived for a in node.args for n in ast.walk(a))
            if "arange" in called or (passed and not called.startswith(("tl.", "triton."))):
                return False
            if passed and called.rsplit(".", 1)[-1] in _BLOCK_CALLS:
                return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            sides = (node.left, node.right)
            if any(isinstance(x, ast.Constant) for x in sides) and any(
                isinstance(n, ast.Name) and n.id in derived for x in sides for n in ast.walk(x)
            ):
                return False
    return True


def _skipping_loops(kernel: ast.FunctionDef) -> Iterator[tuple[ast.For, ast.Call]]:
    """Loops `for v in range(a, b, STEP)` (STEP not 1) whose body reads one element per step: `v` is used, and no
    statement that uses it (or a name made from it) also holds a block's lanes (`tl.arange`, a name made from one),
    passes it to a helper, or adds a constant to it. The `STEP - 1` elements after each `v` are never visited."""
    lanes = names_made_from(kernel.body, arange_names(kernel))
    pids = program_id_names(kernel)
    for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
        call = loop.iter
        if not (
            isinstance(loop.target, ast.Name)
            and isinstance(call, ast.Call)
            and call_name(call, last=True) in ("range", "static_range")
            and len(call.args) == 3
            and not call.keywords
            and constant_value(call.args[2]) not in (1.0, -1.0)
            and not ({n.id for n in ast.walk(call.args[0]) if isinstance(n, ast.Name)} & (lanes | pids))
        ):  # a start at a lane or a program's index: a strided loop that other lanes or programs interleave with
            continue
        derived = names_made_from(loop.body, {loop.target.id})
        users = [
            stmt
            for stmt in _simple_statements(loop.body)
            if any(isinstance(n, ast.Name) and n.id in derived for n in ast.walk(stmt))
        ]
        if users and all(_reads_one_element(stmt, derived, lanes) for stmt in users):
            yield loop, call


@operator("loop-step", "loop-bound")
def loop_step(program: Program) -> Iterator[Edit]:
    """A loop that steps by a block but reads one element a step (`for d in range(0, 4, BLOCK_D)`, `x[start + d]`)
    steps by 1; with two or more such loops in a kernel (a window walked per axis), all of them at once too."""
    for kernel in program.kernels:
        found = list(_skipping_loops(kernel))
        singles: list[Edit] = []
        changes: list[tuple[ast.AST, str]] = []
        for loop, call in found:
            name, (start, stop, step) = program.code(call.func), call.args
            new = f"{name}({program.code(start)}, {program.code(stop)})"
            changes.append((call, new))
            cue = f"`{program.code(loop.target)}` steps by `{program.code(step)}` but reads one element a step"
            singles.append(
                Edit("loop-step", "loop-bound", call.lineno, f"`{program.code(call)}` -> `{new}`",
                     program.replace(call, new), cue, grounded=True)
            )  # fmt: skip
        if len(changes) >= 2:
            yield Edit(
                "loop-step",
                "loop-bound",
                found[0][1].lineno,
                f"every loop that steps by a block but reads one element a step -> step 1 ({len(changes)} loops)",
                program.replace_all(changes),
                "the loops step by blocks but read one element a step",
                grounded=True,
            )
        yield from singles


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class LoopStopsEarly(Mutation):
    name = "loop-stops-early"
    label = "loop-bound"
    summary = "a loop over blocks stops one step early: range(a, n - BLOCK, BLOCK)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        args = range_args(node)
        if args is None:
            return []
        assert isinstance(node, cst.Call)
        stop_index = 0 if len(args) == 1 else 1
        step = args[2].value if len(args) == 3 else cst.Integer("1")
        stop = binary(args[stop_index].value, cst.Subtract(), step)
        new = list(node.args)
        new[stop_index] = new[stop_index].with_changes(value=stop)
        return [node.with_changes(args=new)]


@mutation
class LoopFloorDivision(Mutation):
    name = "loop-floor-division"
    label = "loop-bound"
    summary = "a loop's bound rounds down: range(0, n // BLOCK * BLOCK, BLOCK), or n // BLOCK for cdiv"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        args = range_args(node)
        if args is not None and len(args) == 3:
            assert isinstance(node, cst.Call)
            stop, step = args[1].value, args[2].value
            floored = binary(binary(stop, cst.FloorDivide(), step), cst.Multiply(), step)
            new = list(node.args)
            new[1] = new[1].with_changes(value=floored)
            return [node.with_changes(args=new)]
        if args is not None:
            assert isinstance(node, cst.Call)
            found: list[cst.CSTNode] = []
            for index, arg in enumerate(node.args):
                if call_name(arg.value) in ("tl.cdiv", "triton.cdiv"):
                    inner = positional(arg.value)  # type: ignore[arg-type]
                    if len(inner) == 2:
                        new = list(node.args)
                        new[index] = arg.with_changes(value=binary(inner[0].value, cst.FloorDivide(), inner[1].value))
                        found.append(node.with_changes(args=new))
            return found
        return []
