"""The size model behind derived cases (`kope.cases.derive`): a task's root size parameters and their
coordinates, the model of how input shapes follow them (fitted from probes), and the variant values
(odd, prime, shrunk to the element budget by the shrink rules)."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kope import syntax
from kope.cases.task import OverrideValue, Task, binding_counts, is_size_value, module_bindings
from kope.protocol.probing import ProbedInput

CPU_MAX_ELEMENTS = 300_000
"""The most elements a derived case's inputs (or its outputs) hold on the CPU: Triton's interpreter
then takes seconds per case."""
CUDA_MAX_ELEMENTS = 1 << 26
_ALIGN = 16
KEEP_SMALL = 8
"""Sizes at most this small keep their value when a case is shrunk."""


def default_max_elements(device: str) -> int:
    return CUDA_MAX_ELEMENTS if device.startswith("cuda") else CPU_MAX_ELEMENTS


# -- roots and coordinates ---------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Coord:
    """A root integer, or one element of a root tuple."""

    name: str
    index: int = -1

    @property
    def label(self) -> str:
        return self.name if self.index < 0 else f"{self.name}[{self.index}]"


Values = dict[Coord, int]
ShrinkRule = tuple[str, Callable[[int, float], int], Mapping[Coord, Callable[[int, float], int]] | None]
"""A shrink rule: its name, the rule for every size, and rules for some sizes instead."""


def size_roots(task: Task, sizes: Mapping[str, object]) -> dict[str, OverrideValue]:
    """Module-level size parameters bound once, from an expression that uses no other module-level name.

    Every assignment form counts: `N = 4096`, `n: int = 4096`, chained (`height = width = 128`), tuple
    and list unpacking (`depth, height, width = 24, 48, 48`), and statements on one line
    (`depth = 32; height = width = 128`). `sizes` are the values the task's names had once it ran
    (`PlanInfo.sizes`). Names derived from a root (`shape = (N, 4)`, `out = 2 * N`) are not roots:
    they follow their root when it is overridden.
    """
    tree = syntax.parse(task.source)
    counts = binding_counts(tree)
    assigned = set(task.assigned_names)
    roots: dict[str, OverrideValue] = {}
    for name, value_node in module_bindings(tree):
        if counts[name] != 1 or name.startswith("_"):
            continue
        if any(isinstance(n, ast.Name) and n.id in assigned for n in ast.walk(value_node)):
            continue
        value = sizes.get(name)
        if isinstance(value, list):
            value = tuple(value)
        if is_size_value(value):
            roots[name] = value  # type: ignore[assignment]
    return roots


def coords_of(roots: Mapping[str, OverrideValue]) -> Values:
    values: Values = {}
    for name, value in roots.items():
        if isinstance(value, tuple):
            for index, item in enumerate(value):
                values[Coord(name, index)] = int(item)
        else:
            values[Coord(name)] = int(value)
    return values


def overrides_of(roots: Mapping[str, OverrideValue], values: Mapping[Coord, int]) -> dict[str, OverrideValue]:
    """Override values for every root that has a coordinate in `values`."""
    result: dict[str, OverrideValue] = {}
    for name, original in roots.items():
        if isinstance(original, tuple):
            if any(Coord(name, i) in values for i in range(len(original))):
                result[name] = tuple(values.get(Coord(name, i), v) for i, v in enumerate(original))
        elif Coord(name) in values:
            result[name] = values[Coord(name)]
    return result


# -- the shape model ---------------------------------------------------------------------------


Shapes = list[list[int] | None]


def shapes_of(items: Sequence[ProbedInput] | None) -> Shapes | None:
    if items is None:
        return None
    return [list(item.shape) if item.shape is not None else None for item in items]


def structure_of(shapes: Shapes) -> list[int | None]:
    return [None if shape is None else len(shape) for shape in shapes]


@dataclass
class ShapeModel:
    """Each dimension of every input (and output, where known) as a function of the sizing coordinates.

    Where the outputs are known, a last pseudo-shape `[n]` holds the model's parameter and buffer
    elements: a convolution's `out_channels` sizes its weight and its output, not its input.
    """

    base: Values
    base_shapes: Shapes
    """The inputs' shapes, then the outputs' where they are known, then `[parameter elements]`."""
    n_inputs: int
    params: bool = False
    """The last entry of `base_shapes` counts the parameters and buffers."""
    dims: list[list[Callable[[Mapping[Coord, int]], float]]] = field(default_factory=list)

    def shapes(self, values: Mapping[Coord, int]) -> list[list[int] | None]:
        merged = {**self.base, **values}
        out: list[list[int] | None] = []
        for shape, dims in zip(self.base_shapes, self.dims, strict=True):
            out.append(None if shape is None else [max(0, round(d(merged))) for d in dims])
        return out

    def counts(self, values: Mapping[Coord, int]) -> tuple[int, int, int]:
        """Elements of the inputs, of the outputs (0 where unknown) and of the parameters (0 where unknown)."""
        counts = [math.prod(shape) if shape is not None else 0 for shape in self.shapes(values)]
        params = counts.pop() if self.params else 0
        return sum(counts[: self.n_inputs]), sum(counts[self.n_inputs :]), params

    def numel(self, values: Mapping[Coord, int]) -> int:
        """The case's size: the larger of its inputs' and its outputs' element counts (outputs where known),
        and of its parameters' where the varied sizes size them."""
        inputs, outputs, params = self.counts(values)
        return max(inputs, outputs, params if self.params_budgeted else 0)

    @property
    def params_vary(self) -> bool:
        return (
            self.params
            and bool(self.dims)
            and any(d(self.base) != d({c: v + 1 for c, v in self.base.items()}) for d in self.dims[-1])
        )

    params_budgeted: bool = False
    """The parameters count toward the element budget: they vary with the sizes and, at size 1, fit
    it (a whole network's fixed layers count toward the memory estimate only)."""

    def budget_parameters(self, budget: int) -> None:
        self.params_budgeted = self.params_vary and self.counts(dict.fromkeys(self.base, 1))[2] <= budget

    def elements(self, values: Mapping[Coord, int]) -> int:
        """Every element the case holds: inputs, outputs and parameters."""
        return sum(self.counts(values))


def fit_shapes(
    base: Values,
    base_shapes: Shapes,
    perturbed: Mapping[Coord, list[tuple[int, Shapes]]],
    n_inputs: int,
    *,
    params: bool = False,
) -> ShapeModel:
    model = ShapeModel(base=base, base_shapes=base_shapes, n_inputs=n_inputs, params=params)
    for i, shape in enumerate(base_shapes):
        dims: list[Callable[[Mapping[Coord, int]], float]] = []
        for j, d0 in enumerate(shape or []):
            points = {
                coord: [(value, dims_of[j]) for value, shapes in probes if (dims_of := shapes[i]) is not None]
                for coord, probes in perturbed.items()
            }
            deps = {coord: pts for coord, pts in points.items() if any(d != d0 for _, d in pts)}
            dims.append(_dimension(base, d0, deps))
        model.dims.append(dims)
    return model


def _dimension(
    base: Values, d0: int, deps: Mapping[Coord, list[tuple[int, int]]]
) -> Callable[[Mapping[Coord, int]], float]:
    if not deps:
        return lambda values: d0
    if len(deps) == 1:
        ((coord, points),) = deps.items()
        v0 = base[coord]
        (v1, d1), *rest = points
        slope = (d1 - d0) / (v1 - v0)
        if all(abs(d0 + slope * (v - v0) - d) <= max(1.0, 0.01 * abs(d)) for v, d in rest):
            return lambda values: d0 + slope * (values[coord] - v0)
    exponents: dict[Coord, float] = {}
    for coord, points in deps.items():
        v0 = base[coord]
        v1, d1 = points[0]
        exponents[coord] = math.log(d1 / d0) / math.log(v1 / v0) if d0 > 0 and d1 > 0 and v0 > 0 else 1.0
    return lambda values: d0 * math.prod((max(values[c], 1) / base[c]) ** e for c, e in exponents.items())


def perturbations(value: int) -> tuple[int, ...]:
    """Other values for a size: multiples, so that whatever divides it still does (a group count), and
    half of it where it is even, so that it still divides what it divided (channels by groups)."""
    half = (value // 2,) if value % 2 == 0 and value >= 4 else ()
    return (2 * value, 3 * value, *half)


SMALL_PRIMES = (5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)


# -- variant values ----------------------------------------------------------------------------


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    return all(n % k for k in range(2, math.isqrt(n) + 1))


def _prime_at_most(n: int) -> int:
    while n > 2 and not _is_prime(n):
        n -= 1
    return max(n, 2)


def odd_size(value: int, *, grow: bool = True) -> int:
    """A nearby odd size (hence no multiple of 16, 32, 64 or 128): 64 → 63, 387 → 385, and 2 → 3
    (2 → 1 without `grow`, where 3 would not fit the budget)."""
    if value <= 1 or value == 3:
        return value
    if value == 2:
        return 3 if grow else 1
    return value - 1 if value % 2 == 0 else value - 2


def prime_sizes(values: Mapping[Coord, int], *, distinct: bool = True) -> Values:
    """Primes near 0.8 × each size (sizes under 3 stay), largest sizes first: distinct ones, or, with
    `distinct=False`, the same prime for equal sizes (for tasks that need two sizes to agree)."""
    used: set[int] = set()
    chosen: dict[int, int] = {}
    result: Values = {}
    for coord in sorted(values, key=lambda c: (-values[c], c)):
        value = values[coord]
        if value < 3:
            result[coord] = value
            continue
        if not distinct and value in chosen:
            result[coord] = chosen[value]
            continue
        prime = _prime_at_most(max(2, math.ceil(value * 0.8)))
        while prime in used and prime > 2:
            prime = _prime_at_most(prime - 1)
        used.add(prime)
        result[coord] = chosen[value] = prime
    return result


def shrink_values(
    original: Values,
    fits: Callable[[Values], bool],
    rule: Callable[[int, float], int],
    rules: Mapping[Coord, Callable[[int, float], int]] | None = None,
) -> Values | None:
    """The largest proportional shrink under `rule` (or, per coordinate, `rules`) whose estimated size `fits`."""

    def at(factor: float) -> Values:
        return {c: min(v, (rules or {}).get(c, rule)(v, factor)) for c, v in original.items()}

    if not fits(at(1e-9)):
        return None
    low, high = 0.0, 1.0
    for _ in range(50):
        middle = (low + high) / 2
        if fits(at(middle)):
            low = middle
        else:
            high = middle
    return at(low)


def shrink_aligned(value: int, factor: float) -> int:
    """Proportional, small sizes kept, and a multiple of the original's power-of-two factor (up to 16)
    where that costs little: the step never exceeds a quarter of the new size."""
    if value <= KEEP_SMALL:
        return value
    target = value * factor
    step = min(math.gcd(value, _ALIGN), 1 << max(0, int(math.log2(max(1.0, target / 4)))))
    return max(min(value, KEEP_SMALL), step, round(target / step) * step)


def _keep_small(value: int, factor: float) -> int:
    return max(min(value, KEEP_SMALL), round(value * factor))


def shrink_plain(value: int, factor: float) -> int:
    return max(1, round(value * factor))


def shrink_aligned_to(align: int) -> Callable[[int, float], int]:
    def rule(value: int, factor: float) -> int:
        step = math.gcd(value, align) or 1
        return max(step, round(value * factor / step) * step)

    return rule


SHRINK_RULES: tuple[tuple[str, Callable[[int, float], int]], ...] = (
    ("shrunk-aligned", shrink_aligned),
    ("shrunk-small", _keep_small),
    ("shrunk-plain", shrink_plain),
    ("shrunk-16", shrink_aligned_to(16)),
    ("shrunk-4", shrink_aligned_to(4)),
)
"""In order of preference: aligned like the original where it costs little; small sizes kept; plain
proportions; every size keeping the original's power-of-two factor up to 16, or up to 4 (for sizes
that must divide by a group count)."""
