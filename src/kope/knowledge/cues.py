"""Code cues: detectors over a kernel's source that point at a known bug.

Each cue is a function from the parsed candidate to the lines where the cue appears. Patterns
name cues in `code_cues`; `kope kb validate` checks the names exist. Cues look at Triton kernel
bodies (functions decorated with `triton.jit`) unless they say otherwise.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from kope.knowledge.analysis import (
    FLOAT_DTYPES,
    HALF_DTYPES,
    INT_DTYPES,
    Kernel,
    Launch,
    Program,
    argument,
    assigned_names,
    base_pointer,
    calls_in,
    constant_value,
    dtype_name,
    expand,
    gathered_indices,
    host_assignments,
    is_float_expr,
    is_uniform,
    keyword,
    names_in,
    padding_leaks,
    pointer_roots,
    statements,
)
from kope.source import ParsedSource, call_name


@dataclass(frozen=True)
class CueHit:
    cue: str
    line: int
    text: str


class Source(ParsedSource):
    """A parsed candidate (kope.source) with its kernels' dataflow facts."""

    @cached_property
    def program(self) -> Program:
        """Kernels with their dataflow facts, and their launches (kope.knowledge.analysis)."""
        return Program(self)

    def kernel_calls(self, *names: str) -> Iterator[ast.Call]:
        """Calls inside kernels to `tl.<name>` (or any attribute/name ending in one of `names`)."""
        for node in self.kernel_nodes():
            if isinstance(node, ast.Call) and call_name(node, last=True) in names:
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


@cue("load-without-mask", "a tl.load of a block of pointers without a mask, where the block can overrun the data")
def load_without_mask(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "load"):
            if argument(call, 1, "mask") is None and _overrunning_block(source, kernel, call.args[0] if call.args else None):
                yield call


@cue("store-without-mask", "a tl.store of a block of pointers without a mask, where the block can overrun the data")
def store_without_mask(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "store"):
            if argument(call, 2, "mask") is None and _overrunning_block(source, kernel, call.args[0] if call.args else None):
                yield call


def _overrunning_block(source: Source, kernel: Kernel, pointer: ast.expr | None) -> bool:
    """Whether an address is built from block offsets (tl.arange) whose width is a padded block
    size (a power of two, a fixed tile), not an exact extent of the data."""
    if pointer is None:
        return False
    offsets = set().union(*(names_in(part) & kernel.aranges for part in expand(pointer, kernel, depth=3)))
    direct = any(True for _ in calls_in(pointer, "arange"))
    if not offsets and not direct:
        return False
    widths: set[str] = set()
    literal = False
    for part in [pointer, *expand(pointer, kernel, depth=4)]:
        for call in calls_in(part, "arange"):
            width = call.args[1] if len(call.args) == 2 else None
            if isinstance(width, ast.Name):
                widths.add(width.id)
            elif width is not None:
                literal = True
    if literal or not widths:
        return True
    launches = source.program.launches_of(kernel)
    if not launches:
        return True
    return any(_padded(launch, width) for launch in launches for width in widths)


def _padded(launch: Launch, param: str, depth: int = 3) -> bool:
    value = launch.args.get(param)
    if value is None:
        return True  # a default or an autotuned block size
    return _padded_value(launch.host, value, depth)


def _padded_value(host: ast.FunctionDef | None, value: ast.AST, depth: int) -> bool:
    if depth < 0:
        return True
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Name):
        assigned = host_assignments(host, value.id)
        if not assigned:
            return value.id.isupper()  # a module-level tile size, not a size argument
        return _padded_value(host, assigned[-1], depth - 1)
    return any(True for _ in calls_in(value, "next_power_of_2", "min", "max"))


# -- masks and padding ------------------------------------------------------------------------


def _kernels(source: Source) -> Iterator[Kernel]:
    for node in source.kernels:
        kernel = source.program.kernel_of(node)
        if kernel is not None:
            yield kernel


def _mask_argument(call: ast.Call) -> ast.expr | None:
    position = 1 if call_name(call, last=True) == "load" else 2
    return argument(call, position, "mask")


def _inclusive_bound(compare: ast.Compare, kernel: Kernel) -> bool:
    """`offs <= n`, `n >= offs`, `offs < n + 1`: a block-offset comparison that admits the bound itself."""
    if len(compare.ops) != 1:
        return False
    left, op, right = compare.left, compare.ops[0], compare.comparators[0]
    if isinstance(op, ast.LtE) and names_in(left) & kernel.aranges and not names_in(right) & kernel.aranges:
        return True
    if isinstance(op, ast.GtE) and names_in(right) & kernel.aranges and not names_in(left) & kernel.aranges:
        return True
    if isinstance(op, ast.Lt) and names_in(left) & kernel.aranges and isinstance(right, ast.BinOp):
        return isinstance(right.op, ast.Add) and constant_value(right.right) == 1.0
    return False


@cue("mask-inclusive-bound", "a load or store mask compares block offsets with <= (or < n + 1): one element too many")
def mask_inclusive_bound(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "load", "store"):
            for node in expand(_mask_argument(call), kernel):
                for compare in ast.walk(node):
                    if isinstance(compare, ast.Compare) and _inclusive_bound(compare, kernel):
                        yield compare


@cue("padding-reaches-reduction", "masked-out lanes hold a value (other=0 before a max, x - mean...) that a reduction takes in")
def padding_reaches_reduction(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for leak in padding_leaks(kernel):
            yield leak.call


# -- grids and loops ---------------------------------------------------------------------------


@cue("grid-floor-div", "a launch grid computed with floor division: the last partial block gets no program")
def grid_floor_div(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        for axis in launch.grid or []:
            for node in ast.walk(axis):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
                    yield node


def _axes_used(kernel: Kernel) -> set[int]:
    axes: set[int] = set()
    for call in calls_in(kernel.node, "program_id"):
        axis = constant_value(argument(call, 0, "axis"))
        if axis is not None:
            axes.add(int(axis))
    return axes


@cue("grid-axis-missing", "the kernel reads tl.program_id(k) but the launch grid has no axis k, or a literal 1 there")
def grid_axis_missing(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = _axes_used(kernel)
        for launch in source.program.launches_of(kernel):
            if launch.grid is None:
                continue
            for axis in sorted(used):
                if axis >= len(launch.grid):
                    yield launch.call
                elif axis > 0 and constant_value(launch.grid[axis]) == 1.0 and _axis_tiles(kernel, axis):
                    yield launch.grid[axis]


def _axis_tiles(kernel: Kernel, axis: int) -> bool:
    """Whether program_id(axis) selects a tile of block offsets (so one program cannot cover the axis)."""
    names = {
        name for name, values in kernel.assigns.items()
        if any(constant_value(argument(c, 0, "axis")) == float(axis) for v in values for c in calls_in(v, "program_id"))
    }
    for values in kernel.assigns.values():
        for value in values:
            if any(True for _ in calls_in(value, "arange")) and (
                names_in(value) & names or any(
                    constant_value(argument(c, 0, "axis")) == float(axis) for c in calls_in(value, "program_id")
                )
            ):
                return True
    return False


def _per_program(expr: ast.AST, kernel: Kernel) -> bool:
    """Whether an expression depends on the program id (a persistent or strided loop start)."""
    return bool(names_in(expr) & kernel.pids) or any(True for _ in calls_in(expr, "program_id", "num_programs"))


def _range_call(loop: ast.For) -> ast.Call | None:
    it = loop.iter
    if isinstance(it, ast.Call) and call_name(it, last=True) in ("range", "static_range"):
        return it
    return None


def _kernel_loops(kernel: Kernel) -> Iterator[ast.For]:
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.For):
            yield node


@cue("loop-stops-early", "a kernel loop bound that stops short of the size: range(0, n - BLOCK, ...), (n // B) * B, n // B")
def loop_stops_early(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            call = _range_call(loop)
            if call is None or not call.args:
                continue
            stop = call.args[1] if len(call.args) >= 2 else call.args[0]
            step = call.args[2] if len(call.args) >= 3 else None
            minus_step = (
                isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Sub) and step is not None
                and ast.unparse(stop.right) == ast.unparse(step) and constant_value(step) != 1.0
            )
            floored = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) for n in ast.walk(stop))
            if minus_step or floored:
                yield stop


@cue("store-loop-skips-start", "a loop that writes the output starts past 0: the first block is never written")
def store_loop_skips_start(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            call = _range_call(loop)
            if call is None or len(call.args) < 2 or constant_value(call.args[0]) == 0.0:
                continue
            if not isinstance(loop.target, ast.Name) or _per_program(call.args[0], kernel):
                continue
            variable = loop.target.id
            for store in calls_in(loop, "store"):
                pointer = store.args[0] if store.args else None
                if any(variable in names_in(node) for node in expand(pointer, kernel)):
                    yield call
                    break


# -- strides and offsets -----------------------------------------------------------------------


def _stride_call(node: ast.AST) -> tuple[str, int] | None:
    """`t.stride(k)` -> ("t", k)."""
    if (
        isinstance(node, ast.Call) and call_name(node, last=True) == "stride" and isinstance(node.func, ast.Attribute)
        and node.args
    ):
        dim = constant_value(node.args[0])
        owner = ast.unparse(node.func.value)
        if dim is not None:
            return owner, int(dim)
    return None


@cue("single-inner-stride", "a launch passes one stride of a tensor, and it is an inner one (stride(1), stride(-1))")
def single_inner_stride(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        by_tensor: dict[str, list[tuple[int, ast.AST]]] = {}
        for value in launch.args.values():
            found = _stride_call(value)
            if found is not None:
                by_tensor.setdefault(found[0], []).append((found[1], value))
        for tensor, strides in by_tensor.items():
            if len(strides) == 1 and strides[0][0] in (1, -1) and _known_2d(launch.host, tensor):
                yield strides[0][1]


_SAME_SHAPE = {"contiguous", "float", "half", "to", "clone", "detach", "cuda", "cpu"}


def _known_2d(host: ast.FunctionDef | None, name: str, depth: int = 3) -> bool:
    """Whether the host code makes `name` a 2-D tensor (`x.view(-1, n)`, `m, n = x.shape`...)."""
    if host is None or depth < 0:
        return False
    for stmt in ast.walk(host):
        if (
            isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Tuple) and len(stmt.targets[0].elts) == 2
            and isinstance(stmt.value, ast.Attribute) and stmt.value.attr == "shape"
            and ast.unparse(stmt.value.value) == name
        ):
            return True
    for value in host_assignments(host, name):
        while isinstance(value, ast.Call) and call_name(value, last=True) in _SAME_SHAPE and isinstance(value.func, ast.Attribute):
            value = value.func.value
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("view", "reshape") and len(value.args) == 2:
            return True
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty", "zeros", "ones", "randn") and (
            len(value.args) == 2 or (len(value.args) == 1 and isinstance(value.args[0], ast.Tuple) and len(value.args[0].elts) == 2)
        ):
            return True
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty_like", "zeros_like") and value.args:
            return _known_2d(host, ast.unparse(value.args[0]), depth - 1)
        if isinstance(value, ast.Name):
            return _known_2d(host, value.id, depth - 1)
    return False


@cue("duplicate-stride-arg", "a launch passes the same stride of a tensor for two different parameters")
def duplicate_stride_arg(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        seen: set[str] = set()
        for value in launch.args.values():
            if _stride_call(value) is not None:
                text = ast.unparse(value)
                if text in seen:
                    yield value
                seen.add(text)


def _pointer_prefixes(kernel: Kernel) -> dict[str, str]:
    prefixes: dict[str, str] = {}
    for param in kernel.params:
        if param.endswith("_ptr") and len(param) > 4:
            prefixes[param] = param[:-4]
    return prefixes


@cue("foreign-stride", "a pointer is advanced with another tensor's stride (x_ptr + i * stride_y...)")
def foreign_stride(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        prefixes = _pointer_prefixes(kernel)
        if len(prefixes) < 2:
            continue
        strides = [p for p in kernel.params if p.startswith("stride_")]

        def owner(stride: str, prefixes: dict[str, str] = prefixes) -> str | None:
            rest = stride[len("stride_"):]
            matches = [p for p in prefixes.values() if rest.startswith(p)]
            return max(matches, key=len) if matches else None

        for call in calls_in(kernel.node, "load", "store", "atomic_add"):
            pointer = call.args[0] if call.args else None
            roots = {prefixes[r] for r in pointer_roots(pointer, kernel) if r in prefixes}
            if len(roots) != 1:
                continue
            (root,) = roots
            used = set().union(*(names_in(n) for n in expand(pointer, kernel, depth=4)))
            for stride in strides:
                if stride in used and owner(stride) not in (None, root):
                    yield call
                    break


@cue("unused-stride-param", "a kernel takes a stride it never uses (often a batch or head offset left out)")
def unused_stride_param(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        for arg in kernel.node.args.args:
            if arg.arg.startswith("stride") and arg.arg not in used:
                yield arg


@cue("unused-program-id", "a program id is read but never used: that grid axis selects nothing")
def unused_program_id(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        for stmt in statements(kernel.node.body):
            if isinstance(stmt, ast.Assign) and any(True for _ in calls_in(stmt.value, "program_id")):
                for name in assigned_names(stmt):
                    if name not in used:
                        yield stmt


@cue("offset-literal-shift", "a literal +1 or -1 added to an index (block offsets, gathered indices) in a load or store address")
def offset_literal_shift(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        indices = kernel.aranges | gathered_indices(kernel)
        addresses = {ast.unparse(c.args[0]) for c in calls_in(kernel.node, "load", "store") if c.args}
        for call in calls_in(kernel.node, "load", "store"):
            pointer = call.args[0] if call.args else None
            for root in expand(pointer, kernel, depth=2):
                for node in ast.walk(root):
                    if (
                        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)
                        and constant_value(node.right) in (1.0, -1.0)
                        and names_in(node.left) & indices
                        and not _interleaved(node.left)
                        and not (root is pointer and _without(pointer, node) in addresses)
                    ):
                        yield call
                        break


def _interleaved(node: ast.AST) -> bool:
    """`i * 2 + 1`: an odd element of interleaved pairs, not a shift."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (constant_value(node.right) or 0) >= 2


def _without(pointer: ast.expr, shift: ast.BinOp) -> str:
    """The address text with `e + 1` replaced by `e`: when the kernel also accesses that address,
    the +1 reads a deliberate neighbour (start/end pairs, stencils)."""
    return ast.unparse(_drop_node(pointer, shift))


def _drop_node(pointer: ast.expr, shift: ast.BinOp) -> ast.expr:
    if pointer is shift:
        return shift.left
    if isinstance(pointer, ast.BinOp):
        return ast.BinOp(left=_drop_node(pointer.left, shift), op=pointer.op, right=_drop_node(pointer.right, shift))
    if isinstance(pointer, ast.Subscript):
        return ast.Subscript(value=_drop_node(pointer.value, shift), slice=pointer.slice, ctx=pointer.ctx)
    return pointer


@cue("block-relative-index", "inside a loop over blocks, a position is recorded from tl.arange alone, without the block start")
def block_relative_index(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            if not isinstance(loop.target, ast.Name):
                continue
            start = loop.target.id
            relative = {n for n in kernel.aranges if start not in _depends(kernel, n)}
            absolute = {
                name for stmt in statements(loop.body) for name in assigned_names(stmt)
                if isinstance(stmt, ast.Assign) and start in names_in(stmt.value) and names_in(stmt.value) & relative
            }
            if not absolute:
                continue
            for call in calls_in(loop, "where"):
                for value in call.args[1:3]:
                    if isinstance(value, ast.Name) and value.id in relative:
                        yield call


def _depends(kernel: Kernel, name: str) -> set[str]:
    """Every name the values of `name` are computed from, transitively."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for value in kernel.assigns.get(current, []):
            for used in names_in(value) - found:
                found.add(used)
                frontier.append(used)
    return found


# -- arithmetic --------------------------------------------------------------------------------


def _reduction_result(expr: ast.AST, kernel: Kernel) -> bool:
    return any(True for node in expand(expr, kernel, depth=2) for _ in calls_in(node, "sum", "max", "min", "cumsum"))


@cue("divide-by-block-size", "a reduction is divided by a block size (a constexpr) instead of the element count")
def divide_by_block_size(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if (
                isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Name)
                and node.right.id in _masked_block_widths(kernel) and _reduction_result(node.left, kernel)
            ):
                yield node


def _masked_block_widths(kernel: Kernel) -> set[str]:
    """Constexpr widths of tl.arange blocks whose offsets are masked against a size (so the block
    can be wider than the data it covers)."""
    widths: set[str] = set()
    masked = {n for m in kernel.masks for v in kernel.assigns.get(m, []) for n in names_in(v)}
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.Compare) and names_in(node) & kernel.aranges:
            masked |= names_in(node)
    for name, values in kernel.assigns.items():
        for value in values:
            for call in calls_in(value, "arange"):
                width = call.args[1] if len(call.args) == 2 else None
                if (
                    isinstance(width, ast.Name) and width.id in kernel.constexprs
                    and (name in masked or masked & _derived_from(kernel, name))
                ):
                    widths.add(width.id)
    return widths


def _derived_from(kernel: Kernel, name: str) -> set[str]:
    """Names whose values use `name` (directly or transitively)."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for other, values in kernel.assigns.items():
            if other not in found and any(current in names_in(v) for v in values):
                found.add(other)
                frontier.append(other)
    return found


@cue("divide-by-n-minus-one", "a reduction is divided by (n - 1): the unbiased normaliser, where the biased one is usual")
def divide_by_n_minus_one(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.BinOp):
                right = node.right
                if isinstance(right.op, ast.Sub) and constant_value(right.right) == 1.0 and _reduction_result(node.left, kernel):
                    yield node


KNOWN_CONSTANTS: dict[str, float] = {
    "GELU tanh cubic coefficient": 0.044715,
    "sqrt(2/pi)": math.sqrt(2 / math.pi),
    "log2(e)": math.log2(math.e),
    "ln(2)": math.log(2),
    "1/sqrt(2)": 1 / math.sqrt(2),
    "sqrt(2)": math.sqrt(2),
    "pi": math.pi,
    "e": math.e,
    "1/pi": 1 / math.pi,
    "sqrt(2*pi)": math.sqrt(2 * math.pi),
    "1/sqrt(2*pi)": 1 / math.sqrt(2 * math.pi),
    "2/sqrt(pi)": 2 / math.sqrt(math.pi),
    "sigmoid-GELU coefficient": 1.702,
    "SELU scale": 1.0507009873554805,
    "SELU alpha": 1.6732632423543772,
}


def _significant(text: str) -> str:
    digits = text.lower().split("e")[0].replace(".", "").replace("-", "").lstrip("0")
    return digits.rstrip("0") or "0"


def near_constant(value: float, text: str) -> str | None:
    """The known constant a literal looks like a slip of (wrong decimal place, a mistyped digit)."""
    if value <= 0 or not math.isfinite(value):
        return None
    digits = _significant(text)
    if len(digits) < 3:
        return None
    for constant in KNOWN_CONSTANTS.values():
        if math.isclose(value, constant, rel_tol=0, abs_tol=0.51 * 10 ** (math.floor(math.log10(value)) - len(digits) + 1)):
            return None
    for name, constant in KNOWN_CONSTANTS.items():
        reference = _significant(repr(constant))
        ratio = value / constant
        decade = round(math.log10(ratio))
        if decade != 0 and abs(ratio / 10**decade - 1) < 10 ** (1 - len(digits)):
            return name
        if decade == 0 and abs(ratio - 1) < 0.2 and _digit_slip(digits, reference[: len(digits) + 1]):
            return name
    return None


def _digit_slip(digits: str, reference: str) -> bool:
    """One digit changed, dropped, added, or two adjacent digits swapped."""
    a, b = digits, reference[: len(digits)]
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        if len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]:
            return True
    longer = reference[: len(digits) + 1]
    return any(longer[:i] + longer[i + 1:] == a for i in range(len(longer))) or any(
        a[:i] + a[i + 1:] == reference[: len(digits) - 1] for i in range(len(a))
    )


@cue("suspicious-constant", "a float literal close to a well-known constant but not equal to it (0.44715, 0.7978...)")
def suspicious_constant(source: Source) -> Iterator[ast.AST]:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            text = ast.get_source_segment(source.text, node) or repr(node.value)
            if near_constant(node.value, text) is not None:
                yield node


@cue("exp2-without-log2e", "tl.exp2 is used but no log2(e) factor appears: the softmax runs at base 2, not e")
def exp2_without_log2e(source: Source) -> Iterator[ast.AST]:
    text = source.text.lower().replace("_", "")
    if any(marker in text for marker in ("1.44269", "log2(math.e)", "log2e", "0.693147", "log(2", "ln2")):
        return
    yield from source.kernel_calls("exp2")


@cue("store-shared-address", "every program of a multi-program launch stores to the same address (needs tl.atomic_add)")
def store_shared_address(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        launches = source.program.launches_of(kernel)
        if not launches or all(_single_program(launch) for launch in launches):
            continue
        for call in calls_in(kernel.node, "store"):
            pointer = call.args[0] if call.args else None
            if not (names_in(pointer) & kernel.pids) and not any(True for _ in calls_in(pointer, "program_id")):
                yield call


def _single_program(launch: Launch) -> bool:
    return launch.grid is not None and all(constant_value(axis) == 1.0 for axis in launch.grid)


@cue("partial-store-into-empty", "a store masked by a data condition into a buffer from torch.empty: the other elements stay unwritten")
def partial_store_into_empty(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        params: set[str] = set()
        for call in calls_in(kernel.node, "store"):
            mask = argument(call, 2, "mask")
            data_condition = any(
                isinstance(n, ast.Compare) and names_in(n) & kernel.loaded - kernel.aranges
                for part in expand(mask, kernel, depth=2) for n in ast.walk(part)
            )
            if data_condition:
                params |= pointer_roots(call.args[0] if call.args else None, kernel)
        for launch in source.program.launches_of(kernel):
            for param in params:
                arg = launch.args.get(param)
                if isinstance(arg, ast.Name):
                    for value in host_assignments(launch.host, arg.id):
                        if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty", "empty_like", "empty_strided"):
                            yield value


# -- precision and stability -------------------------------------------------------------------


@cue("half-precision-cast", "a kernel casts to float16/bfloat16 or keeps a half-precision accumulator")
def half_precision_cast(source: Source) -> Iterator[ast.AST]:
    for node in source.kernel_nodes():
        if isinstance(node, ast.Attribute) and node.attr in HALF_DTYPES and ast.unparse(node.value) in ("tl", "triton.language"):
            yield node


@cue("exp-without-max-shift", "tl.exp of loaded data with no max subtracted (and not exp(-|x|)): overflows for large inputs")
def exp_without_max_shift(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "exp", "exp2"):
            arg = call.args[0] if call.args else None
            if arg is None or not (names_in(arg) & kernel.loaded or any(True for _ in calls_in(arg, "load"))):
                continue
            if is_uniform(arg, kernel) or not _feeds_sum(kernel, call):
                continue
            negated = any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) for n in ast.walk(arg))
            shifted = any(
                isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
                for node in expand(arg, kernel, depth=2) for n in _walk_values(node)
            )
            if not (shifted or negated):
                yield call


def _walk_values(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, without entering tl.load calls (their addresses and `other` are not arithmetic on values)."""
    yield node
    if isinstance(node, ast.Call) and call_name(node, last=True) == "load":
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_values(child)


def _feeds_sum(kernel: Kernel, call: ast.Call) -> bool:
    """Whether a call's value reaches a tl.sum (directly, or through the names it is assigned to)."""
    holders: set[str] = set()
    for name, values in kernel.assigns.items():
        if any(any(inner is call for inner in ast.walk(v)) for v in values):
            holders.add(name)
    holders |= set().union(*(_derived_from(kernel, h) for h in holders)) if holders else set()
    for total in calls_in(kernel.node, "sum"):
        if any(inner is call for inner in ast.walk(total)) or names_in(total) & holders:
            return True
    return False


def _initialised_to(kernel: Kernel, name: str, value: float) -> bool:
    first = kernel.assigns.get(name, [None])[0]
    return isinstance(first, ast.Call) and call_name(first, last=True) == "full" and len(first.args) > 1 and constant_value(
        first.args[1]
    ) == value


@cue("inf-minus-inf", "a per-lane running max starts at -inf, padded lanes stay -inf, and exp(m - m_new) is unguarded (NaN)")
def inf_minus_inf(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        running = {n for n in kernel.assigns if _initialised_to(kernel, n, -math.inf)}
        lanes_may_stay_inf: set[str] = set()
        for name, values in kernel.assigns.items():
            for value in values:
                if isinstance(value, ast.Call) and call_name(value, last=True) == "maximum" and names_in(value) & running:
                    others = [a for a in value.args if not (isinstance(a, ast.Name) and a.id in running)]
                    if others and all(_padded_with(o, kernel, -math.inf) for o in others):
                        lanes_may_stay_inf.add(name)
        if not lanes_may_stay_inf:
            continue
        for call in calls_in(kernel.node, "exp", "exp2"):
            arg = call.args[0] if call.args else None
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and names_in(arg.right) & lanes_may_stay_inf:
                yield call


def _padded_with(expr: ast.AST, kernel: Kernel, value: float) -> bool:
    for node in expand(expr, kernel, depth=1):
        for call in calls_in(node, "load"):
            if argument(call, 1, "mask") is not None and constant_value(argument(call, 2, "other")) == value:
                return True
    return False


def _sqrt_calls(node: ast.AST) -> bool:
    return any(call_name(c, last=True) in ("sqrt", "rsqrt", "sqrt_rn") for c in calls_in(node, "sqrt", "rsqrt", "sqrt_rn")) or any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and constant_value(n.right) in (0.5, -0.5)
        for n in ast.walk(node)
    )


def _eps_like(node: ast.AST) -> bool:
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return "eps" in name.lower()
    value = constant_value(node)
    return value is not None and 0 < value < 1e-2


@cue("eps-outside-sqrt", "eps is added after the square root (1/sqrt(var) + eps, sqrt(var) + eps), not inside it")
def eps_outside_sqrt(source: Source) -> Iterator[ast.AST]:
    for node in source.kernel_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _eps_like(other) and _sqrt_calls(side):
                    yield node


@cue("rsqrt-without-eps", "1/sqrt or rsqrt of a reduction (a variance, a mean square) with no eps inside: zero rows give inf")
def rsqrt_without_eps(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.Call) and call_name(node, last=True) == "rsqrt":
                roots = [node.args[0]] if node.args else []
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                roots = [c.args[0] for c in calls_in(node.right, "sqrt", "sqrt_rn") if c.args]
            else:
                continue
            for root in roots:
                parts = expand(root, kernel, depth=2)
                has_eps = any(_eps_like(n) for part in parts for n in ast.walk(part))
                if not has_eps and _reduction_result(root, kernel):
                    yield node


@cue("unused-eps-param", "the kernel takes eps but never uses it")
def unused_eps_param(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        if not any(True for _ in calls_in(kernel.node, "sqrt", "rsqrt", "sqrt_rn")):
            continue
        for arg in kernel.node.args.args:
            if "eps" in arg.arg.lower() and arg.arg not in used:
                yield arg


# -- accumulators and reductions ---------------------------------------------------------------


def _initialiser(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Call) and call_name(value, last=True) in ("zeros", "full", "zeros_like", "full_like")


def _loop_dependencies(loop: ast.For, name: str, kernel: Kernel) -> dict[str, set[str]]:
    """For each name assigned in the loop, the names its new value reads, transitively within the loop."""
    direct: dict[str, set[str]] = {}
    for stmt in statements(loop.body):
        if isinstance(stmt, ast.Assign):
            for target in assigned_names(stmt):
                direct.setdefault(target, set()).update(names_in(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            for target in assigned_names(stmt):
                direct.setdefault(target, set()).update(names_in(stmt.value) | {target})
    closure = {k: set(v) for k, v in direct.items()}
    changed = True
    while changed:
        changed = False
        for deps in closure.values():
            extra = set().union(*(closure.get(d, set()) for d in deps)) - deps
            if extra:
                deps |= extra
                changed = True
    return closure


@cue("accumulator-overwritten-in-loop", "an accumulator is re-initialised or overwritten (= instead of +=) inside the loop that accumulates it")
def accumulator_overwritten_in_loop(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            inside = {id(s) for s in statements(loop.body)}
            before: set[str] = set()
            for stmt in statements(kernel.node.body):
                if stmt is loop:
                    break
                if isinstance(stmt, ast.Assign) and _initialiser(stmt.value) and id(stmt) not in inside:
                    before.update(assigned_names(stmt))
            after = _names_read_after(kernel, loop)
            for stmt in loop.body:
                if not isinstance(stmt, ast.Assign):
                    continue
                for name in assigned_names(stmt):
                    if _reads_loop_state(stmt, name, loop, kernel):
                        continue
                    accumulated = _accumulated_in(loop, name, stmt)
                    if (name in before and (name in after or accumulated)) or (name not in before and _initialiser(stmt.value) and accumulated and name in after):
                        yield stmt


def _accumulated_in(loop: ast.For, name: str, skip: ast.stmt) -> bool:
    """Whether the loop also updates `name` from its own value (`name += ...`, `name = f(name, ...)`)."""
    for stmt in statements(loop.body):
        if stmt is skip:
            continue
        if isinstance(stmt, ast.AugAssign) and name in assigned_names(stmt):
            return True
        if isinstance(stmt, ast.Assign) and name in assigned_names(stmt) and name in names_in(stmt.value):
            return True
    return False


def _reads_loop_state(stmt: ast.Assign, name: str, loop: ast.For, kernel: Kernel) -> bool:
    deps = _loop_dependencies(loop, name, kernel)
    reads = names_in(stmt.value)
    return name in reads or any(name in deps.get(r, set()) for r in reads)


def _names_read_after(kernel: Kernel, loop: ast.For) -> set[str]:
    names: set[str] = set()
    found = False
    for stmt in statements(kernel.node.body):
        if stmt is loop:
            found = True
            continue
        if found and not _within(stmt, loop):
            names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return names


def _within(stmt: ast.AST, loop: ast.For) -> bool:
    return any(stmt is inner for inner in ast.walk(loop))


def _zero_init(kernel: Kernel, name: str) -> bool:
    first = kernel.assigns.get(name, [None])[0]
    if isinstance(first, ast.Call) and call_name(first, last=True) in ("zeros", "zeros_like"):
        return True
    if isinstance(first, ast.Call) and call_name(first, last=True) == "full" and len(first.args) > 1:
        return constant_value(first.args[1]) == 0.0
    return constant_value(first) == 0.0


@cue("max-init-zero", "a running max (or min) starts at 0 instead of -inf (+inf): all-negative data comes out as 0")
def max_init_zero(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            for stmt in statements(loop.body):
                if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
                    continue
                for name in assigned_names(stmt):
                    if _zero_init(kernel, name) and _running_extreme(stmt.value, name, kernel):
                        yield stmt.value


def _running_extreme(value: ast.Call, name: str, kernel: Kernel) -> bool:
    """`m = tl.maximum(m, x)` or `m = tl.where(x > m, x, m)`: a running max or min of `name`."""
    direct = lambda e: isinstance(e, ast.Name) and e.id == name  # noqa: E731
    if call_name(value, last=True) in ("maximum", "minimum"):
        return any(direct(a) for a in value.args)
    if call_name(value, last=True) == "where" and len(value.args) == 3 and direct(value.args[2]):
        cond = value.args[0]
        compares = [cond] if isinstance(cond, ast.Compare) else [
            v for v in kernel.assigns.get(cond.id, []) if isinstance(v, ast.Compare)
        ] if isinstance(cond, ast.Name) else []
        return any(name in names_in(c) and isinstance(c.ops[0], ast.Gt | ast.GtE | ast.Lt | ast.LtE) for c in compares)
    return False


@cue("online-normalizer-init", "an online-softmax running sum starts at 0 although the running max already holds the first block")
def online_normalizer_init(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for name, values in kernel.assigns.items():
            if not _zero_init(kernel, name):
                continue
            for value in values[1:]:
                if not (isinstance(value, ast.BinOp) and name in names_in(value)):
                    continue
                for call in calls_in(value, "exp", "exp2"):
                    arg = call.args[0] if call.args else None
                    if not (isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and isinstance(arg.left, ast.Name)):
                        continue
                    running = arg.left.id
                    first = kernel.assigns.get(running, [None])[0]
                    from_data = first is not None and any(True for _ in calls_in(first, "load"))
                    if from_data and _running_max(kernel, running):
                        yield value


def _running_max(kernel: Kernel, name: str) -> bool:
    """`name` is re-assigned `tl.maximum(name, ...)`, directly or through another name."""
    for value in kernel.assigns.get(name, [])[1:]:
        candidates = [value] + (kernel.assigns.get(value.id, []) if isinstance(value, ast.Name) else [])
        for candidate in candidates:
            if isinstance(candidate, ast.Call) and call_name(candidate, last=True) == "maximum" and any(
                isinstance(a, ast.Name) and a.id == name for a in candidate.args
            ):
                return True
    return False


# -- broadcasting ------------------------------------------------------------------------------


def _expand_axis(node: ast.Subscript) -> int | None:
    """`v[:, None]` -> 0 (v runs along axis 0), `v[None, :]` -> 1."""
    index = node.slice
    if not isinstance(index, ast.Tuple) or len(index.elts) != 2:
        return None
    first, second = index.elts
    is_none = lambda e: isinstance(e, ast.Constant) and e.value is None  # noqa: E731
    is_all = lambda e: isinstance(e, ast.Slice) and e.lower is None and e.upper is None  # noqa: E731
    if is_all(first) and is_none(second):
        return 0
    if is_none(first) and is_all(second):
        return 1
    return None


def _store_axes(kernel: Kernel) -> dict[str, int]:
    """The axis each block-offset name runs along in the output addresses (tl.store)."""
    axes: dict[str, set[int]] = {}
    for call in calls_in(kernel.node, "store"):
        pointer = call.args[0] if call.args else None
        for root in expand(pointer, kernel, depth=2):
            for node in ast.walk(root):
                if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in kernel.aranges:
                    axis = _expand_axis(node)
                    if axis is not None:
                        axes.setdefault(node.value.id, set()).add(axis)
    return {name: next(iter(found)) for name, found in axes.items() if len(found) == 1}


@cue("broadcast-axis-mismatch", "a 1-D vector loaded along one output axis is broadcast along the other (bias[:, None] for a per-column bias)")
def broadcast_axis_mismatch(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        axes = _store_axes(kernel)
        if not axes:
            continue
        vectors: dict[str, int] = {}
        for name, values in kernel.assigns.items():
            for value in values:
                loads = list(calls_in(value, "load"))
                if len(loads) != 1 or not loads[0].args:
                    continue
                pointer = loads[0].args[0]
                if any(isinstance(n, ast.Subscript) for n in ast.walk(pointer)):
                    continue
                found = {axes[n] for n in names_in(pointer) if n in axes}
                if len(found) == 1:
                    vectors[name] = found.pop()
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in vectors:
                axis = _expand_axis(node)
                if axis is not None and axis != vectors[node.value.id]:
                    yield node


# -- dtypes ------------------------------------------------------------------------------------


def _index_params(kernel: Kernel) -> set[str]:
    """Pointer parameters whose loaded values are used as offsets in other addresses (index tensors)."""
    found: set[str] = set()
    for name, values in kernel.assigns.items():
        for value in values:
            for load in calls_in(value, "load"):
                roots = pointer_roots(load.args[0] if load.args else None, kernel)
                for call in calls_in(kernel.node, "load", "store"):
                    pointer = call.args[0] if call.args else None
                    if pointer is not None and name in set().union(*(names_in(n) for n in expand(pointer, kernel, 2))):
                        found |= roots
    return found


def _float_store_params(kernel: Kernel) -> set[str]:
    found: set[str] = set()
    for call in calls_in(kernel.node, "store", "atomic_add"):
        value = call.args[1] if len(call.args) > 1 else keyword(call, "value")
        if is_float_expr(value, kernel.floats):
            found |= pointer_roots(call.args[0] if call.args else None, kernel)
    return found


def _allocation_dtype(value: ast.AST) -> ast.expr | None:
    if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty", "zeros", "full", "ones", "empty_like", "zeros_like"):
        return keyword(value, "dtype")
    return None


@cue("integer-buffer-for-float", "a buffer with an integer dtype (or an index tensor's dtype) receives float results")
def integer_buffer_for_float(source: Source) -> Iterator[ast.AST]:
    program = source.program
    index_tensors: set[str] = set()
    for launch in program.launches:
        kernel = program.kernels[launch.kernel.name]
        for param in _index_params(kernel):
            arg = launch.args.get(param)
            if isinstance(arg, ast.Name):
                index_tensors.add(arg.id)
    for launch in program.launches:
        kernel = program.kernels[launch.kernel.name]
        for param in _float_store_params(kernel):
            arg = launch.args.get(param)
            if not isinstance(arg, ast.Name):
                continue
            for value in host_assignments(launch.host, arg.id):
                dtype = _allocation_dtype(value)
                if dtype is None:
                    continue
                integer = dtype_name(dtype) in INT_DTYPES or (
                    isinstance(dtype, ast.Attribute) and dtype.attr == "dtype" and ast.unparse(dtype.value) in index_tensors
                )
                if integer:
                    yield value


@cue("float-cast-to-int", "a floating-point value is cast to an integer type inside a kernel (truncation)")
def float_cast_to_int(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        float_roots = _float_pointers(kernel)
        for call in calls_in(kernel.node, "to"):
            target = call.args[0] if call.args else keyword(call, "dtype")
            receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
            if dtype_name(target) not in INT_DTYPES:
                continue
            loaded_float = isinstance(receiver, ast.Call) and call_name(receiver, last=True) == "load" and (
                base_pointer(receiver.args[0] if receiver.args else None, kernel) in float_roots
            )
            if loaded_float or is_float_expr(receiver, kernel.floats):
                yield call


def _float_pointers(kernel: Kernel) -> set[str]:
    """Pointer parameters that the kernel elsewhere loads and converts to a float type (float data)."""
    roots: set[str] = set()
    for call in calls_in(kernel.node, "to"):
        target = call.args[0] if call.args else keyword(call, "dtype")
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if dtype_name(target) in FLOAT_DTYPES and isinstance(receiver, ast.Call) and call_name(receiver, last=True) == "load":
            base = base_pointer(receiver.args[0] if receiver.args else None, kernel)
            if base is not None:
                roots.add(base)
    return roots


@cue("half-precision-buffer", "the host allocates a float16/bfloat16 buffer that a kernel writes results into")
def half_precision_buffer(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        for arg in launch.args.values():
            if not isinstance(arg, ast.Name):
                continue
            for value in host_assignments(launch.host, arg.id):
                dtype = _allocation_dtype(value)
                if dtype_name(dtype) in HALF_DTYPES:
                    yield value
