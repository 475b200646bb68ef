"""Derived cases: full coverage for a task file that declares a single shape.

Most task files (all of KernelBench's) define one shape through module-level integers, often far
too large for a CPU. For such a task (no `get_cases()`) kope derives a set of valid cases itself:

1. **Which names size the inputs.** The *root* size parameters are module-level integers (and
   tuples of integers) assigned once from an expression that uses no other module-level name
   (`N = 2048 * 2` is one; `shape = (N, 4)` follows `N`). A sandboxed `shapes` job executes the task
   with each root perturbed in turn and builds the inputs on PyTorch's meta device (shapes without
   data, so even billions of elements cost nothing). A root whose change changes an input shape
   sizes the inputs; the others (a reduction axis, a stride, a kernel size, an unused name) are
   left alone. Each input dimension is fitted as a function of the roots it follows (linear, else a
   power law), which estimates the element count of any assignment. Where the meta device cannot
   run `get_inputs()`, the probes use small distinct primes and real tensors instead.
2. **Variants.** The *original* sizes when the case fits the element budget (`max_elements`, the
   larger of the inputs' and the outputs' element counts; output shapes come from running the
   reference on the meta device too), else *shrunk* sizes that keep the original's proportions
   (and, where it costs little, its alignment to powers of two); then, from that base, *odd* sizes
   (no multiple of 16/32/64/128), distinct *prime* sizes (which also break equalities such as
   M == N), size *one*, and two input distributions, *scaled* and *shifted*, which catch constant
   outputs and kernels that sniff their inputs. Each size the base keeps under a block that the task's
   own value passes is also varied *alone*, past the usual block sizes (65, 129, 257, 1031), the others
   small: a bug past one block shows in the dimension where it lives.
4. **Low signal.** Where, on the base case's inputs, the reference's output equals an input, is constant
   or is below the tolerance (a ReLU of `torch.rand`), a copy or a constant kernel matches it: a
   *widened* case (inputs signed, scaled, with outliers) on which the output has signal is added, and
   copies are judged there instead of on the visible case (`Derivation.low_signal`, `mark_low_signal`).
3. **Validation.** A variant is kept only if the reference runs on it and every floating-point
   output is finite; duplicates are dropped. When varying every size at once breaks the reference
   (a size must divide by a group count, exceed a kernel size), each size is varied alone and those
   that keep the reference valid are combined.

The base case (original or shrunk) is visible to agents; every other derived case is hidden. The
work costs a few `shapes` jobs (one per round, each batching its variants), and the evaluator caches
the result per task, device and budget.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kope.cases.derivation import Derivation, DerivedCase, Kind, SizeParameter, TooLarge
from kope.cases.signal import quiet_output
from kope.cases.sizes import (
    KEEP_SMALL,
    SHRINK_RULES,
    SMALL_PRIMES,
    Coord,
    ShapeModel,
    Shapes,
    ShrinkRule,
    Values,
    coords_of,
    default_max_elements,
    fit_shapes,
    odd_size,
    overrides_of,
    perturbations,
    prime_sizes,
    shapes_of,
    shrink_aligned,
    shrink_aligned_to,
    shrink_plain,
    shrink_values,
    size_roots,
    structure_of,
)
from kope.cases.task import OverrideValue, Task
from kope.cases.tolerance import Tolerance
from kope.protocol.inputs import InputTransform
from kope.protocol.probing import ShapeProbe, ShapeProbeResult
from kope.protocol.results import LowSignal

BYTES_PER_ELEMENT = 12
"""Memory estimate per element of a case's inputs, outputs and parameters: the candidate's float32
copy and the reference's float64 one."""
MEMORY_SHARE = 0.5
"""The share of a job's memory limit the estimate may take (the rest: intermediates, PyTorch itself)."""
SCALED = InputTransform(scale=4.0)
SHIFTED = InputTransform(shift=-0.5)
WIDENED: tuple[tuple[str, InputTransform], ...] = (
    ("widened", InputTransform(scale=4.0, shift=-2.0)),
    ("widened-outliers", InputTransform(scale=4.0, shift=-2.0, pattern="outliers")),
    ("widened-large", InputTransform(scale=200.0, shift=-100.0, pattern="outliers")),
)
"""For a low-signal task, in order of preference: floating-point inputs signed and scaled (`torch.rand`'s
[0, 1) becomes [-2, 2)); the same with outliers (every 61st element times ±10 first: a clamp to [-5, 5]
is still the identity on [-2, 2)); or fifty times larger (an output near zero, `1e-6 * x`). The
first on which the reference's output is valid and has signal is kept."""
_MAX_SINGLES = 8
BLOCK_LADDER = (1031, 257, 129, 65, 33, 17)
"""Values for a size varied alone, largest first: each just past a usual block size (1024, 256, 128, 64,
32, 16), none a multiple of 16; 1031 is prime. The largest that the task's own value reaches and the
case's share of the budget holds is chosen."""
ALONE_SMALL = 7
"""The other sizes of a case that varies one alone (sizes already smaller keep their value)."""
MAX_ALONE = 4
"""At most this many sizes are varied alone (the largest of the task's), each case holding at most its
share of the element budget: the cases that vary one size alone hold one budget of elements together."""
_SHRINK_ATTEMPTS = 4

ProbeRunner = Callable[[Sequence[ShapeProbe]], list[ShapeProbeResult]]
"""Runs a batch of probes in one sandboxed `shapes` job and returns one result per probe, in order."""


# -- the derivation ----------------------------------------------------------------------------


@dataclass
class _Variant:
    """A candidate under evaluation; becomes a `DerivedCase`."""

    name: str
    kind: Kind
    values: Values
    inputs: InputTransform | None = None
    result: ShapeProbeResult | None = None
    reason: str = ""
    kept: bool = False

    def key(self) -> tuple[object, ...]:
        return (tuple(sorted(self.values.items())), self.inputs)

    @property
    def total(self) -> int:
        """The larger of the input and output element counts."""
        r = self.result
        return 0 if r is None else max(r.numel or 0, r.output_numel or 0)


class _Deriver:
    def __init__(
        self,
        task: Task,
        sizes: Mapping[str, object],
        run: ProbeRunner,
        device: str,
        budget: int,
        memory_mb: int | None = None,
        tolerances: Mapping[str, Tolerance] | None = None,
    ) -> None:
        self.task = task
        self.tolerances = dict(tolerances or {})
        self.run_probes = run
        self.budget = budget
        self.memory_limit = int(memory_mb * 2**20 * MEMORY_SHARE) if memory_mb else None
        self.original_params: int | None = None
        self.roots = size_roots(task, sizes)
        self.original = coords_of(self.roots)
        self.report = Derivation(task=str(task.path), device=device, max_elements=budget, memory_mb=memory_mb)
        self.variants: list[_Variant] = []
        self.sizing: list[Coord] = []
        self.output_sizing: list[Coord] = []
        """Sizing coordinates that leave the inputs alone (they size the outputs and the parameters)."""
        self.floating_inputs = False

    # probes

    def _source(self, values: Mapping[Coord, int]) -> str:
        return self.task.source_with(overrides_of(self.roots, values))

    def _run(self, probes: list[ShapeProbe]) -> list[ShapeProbeResult]:
        if not probes:
            return []
        self.report.jobs += 1
        return self.run_probes(probes)

    def _validate(self, variants: list[_Variant]) -> None:
        """Run the reference on every new variant (one job); duplicates are dropped unrun."""
        fresh: list[_Variant] = []
        for variant in variants:
            twin = next((v for v in [*self.variants, *fresh] if v.key() == variant.key()), None)
            if twin is not None:
                variant.reason = f"same sizes and inputs as {twin.name}"
                self.variants.append(variant)
                continue
            fresh.append(variant)
        probes = [
            ShapeProbe(
                source=self._source(v.values),
                meta=False,
                reference=True,
                max_elements=self.budget,
                input_scale=v.inputs.scale if v.inputs else 1.0,
                input_shift=v.inputs.shift if v.inputs else 0.0,
                input_pattern=v.inputs.pattern if v.inputs else None,
            )
            for v in fresh
        ]
        for variant, result in zip(fresh, self._run(probes), strict=True):
            variant.result = result
            self.variants.append(variant)

    def _problem(self, variant: _Variant, *, finite_needed: bool = True) -> str | None:
        """Why a validated variant cannot be a case, or None."""
        r = variant.result
        if r is None:
            return "not run"
        if r.error is not None:
            return f"the reference is not valid here: {r.error}"
        if r.skipped is not None:
            return r.skipped
        if not r.ran:
            return "not run"
        if variant.total > self.budget:
            return f"its inputs or outputs hold {variant.total} elements, over the budget of {self.budget}"
        if self.memory_limit is not None and _result_bytes(r) > self.memory_limit:
            return f"needs about {_mb(_result_bytes(r))} MB, over {_mb(self.memory_limit)} MB of the job's memory limit"
        if finite_needed and not r.finite:
            return "the reference gives non-finite outputs"
        return None

    def _over_budget(self, variant: _Variant) -> bool:
        r = variant.result
        if r is None or not r.ran or r.error is not None:
            return False
        return variant.total > self.budget or (self.memory_limit is not None and _result_bytes(r) > self.memory_limit)

    def _memory_excess(self, variant: _Variant) -> float:
        if self.memory_limit is None or variant.result is None:
            return 0.0
        return _result_bytes(variant.result) / self.memory_limit

    def _fits(self, model: ShapeModel, target: int) -> Callable[[Values], bool]:
        """Whether estimated sizes fit: `target` elements, and the job's memory for the whole case."""

        def fits(values: Values) -> bool:
            if model.numel(values) > target:
                return False
            return self.memory_limit is None or model.elements(values) * BYTES_PER_ELEMENT <= self.memory_limit

        return fits

    # step 1: which names size the inputs

    def map_inputs(self) -> ShapeModel | None:
        positive = {c: v for c, v in self.original.items() if v > 0}
        model = self._map(self.original, positive, meta=True)
        if model is None:
            small = dict(self.original)
            small.update({c: SMALL_PRIMES[i % len(SMALL_PRIMES)] for i, c in enumerate(positive)})
            model = self._map(small, {c: small[c] for c in positive}, meta=False)
        return model

    def _map(self, base: Values, positive: Values, *, meta: bool) -> ShapeModel | None:
        order = list(positive)
        probes = [ShapeProbe(source=self._source(base), meta=meta, outputs=meta)]
        for coord in order:
            for value in perturbations(positive[coord]):
                probes.append(ShapeProbe(source=self._source({**base, coord: value}), meta=meta, outputs=meta))
        results = self._run(probes)
        base_shapes = shapes_of(results[0].inputs)
        if base_shapes is None:
            self.report.error = f"cannot build the task's inputs: {results[0].error}"
            return None
        self.report.error = None
        self.report.probe = "meta" if meta else "small"
        self.floating_inputs = any(
            (item.dtype or "").startswith(("float", "bfloat")) for item in results[0].inputs or []
        )
        base_outputs = shapes_of(results[0].outputs)
        n_out = len(base_outputs) if base_outputs is not None else 0
        outputs_known = base_outputs is not None
        base_params = results[0].param_numel if outputs_known else None
        extra = 1 if base_params is not None else 0
        base_full: Shapes = base_shapes + (base_outputs or []) + ([[base_params]] if base_params is not None else [])
        perturbed: dict[Coord, list[tuple[int, Shapes]]] = {}
        reasons: dict[Coord, str] = {}
        self.output_sizing = []
        index = 1
        for coord in order:
            values = perturbations(positive[coord])
            group = results[index : index + len(values)]
            index += len(values)
            ok = [
                (v, shapes, r)
                for v, r in zip(values, group, strict=True)
                if (shapes := shapes_of(r.inputs)) is not None
            ]
            if not ok:
                reasons[coord] = f"varying it breaks get_inputs() ({group[0].error})"
                continue
            if any(structure_of(s) != structure_of(base_shapes) for _, s, _ in ok):
                reasons[coord] = "varying it changes the number or rank of the inputs"
                continue
            entries: list[tuple[int, Shapes]] = []
            for v, shapes, r in ok:
                outputs = shapes_of(r.outputs)
                if base_outputs is None or outputs is None or structure_of(outputs) != structure_of(base_outputs):
                    outputs = [None] * n_out
                params: Shapes = [[r.param_numel] if r.param_numel is not None else None] * extra
                entries.append((v, shapes + outputs + params))
            if any(s != base_shapes for _, s, _ in ok):
                outputs_known = outputs_known and any(
                    s[len(base_shapes) : len(base_shapes) + n_out] != [None] * n_out for _, s in entries
                )
                perturbed[coord] = entries
            elif self._sizes_rest(base_full, len(base_shapes), entries, len(values)):
                if positive[coord] > KEEP_SMALL:
                    perturbed[coord] = entries
                    self.output_sizing.append(coord)
                else:
                    reasons[coord] = (
                        "sizes the outputs or the parameters, but is small (a kernel size or a stride): left alone"
                    )
            else:
                reasons[coord] = "does not change the input shapes"
        self.sizing = list(perturbed)
        if outputs_known and base_outputs is not None:
            model = fit_shapes(base, base_full, perturbed, len(base_shapes), params=base_params is not None)
        else:
            self.sizing = [c for c in self.sizing if c not in self.output_sizing]
            self.output_sizing = []
            inputs_only = {
                c: [(v, s[: len(base_shapes)]) for v, s in e] for c, e in perturbed.items() if c in self.sizing
            }
            model = fit_shapes(base, base_shapes, inputs_only, len(base_shapes))
        model.budget_parameters(self.budget)
        self._record_parameters(model, len(base_shapes), reasons)
        if meta:
            self.report.original_numel = results[0].numel
            self.report.original_output_numel = results[0].output_numel if base_outputs is not None else None
            self.original_params = base_params
            self.report.original_bytes = _result_bytes(results[0]) if base_outputs is not None else None
        else:
            self.report.original_numel = model.numel(self.original)
            self.report.original_estimated = True
        return model

    @staticmethod
    def _sizes_rest(base: Shapes, n_inputs: int, entries: list[tuple[int, Shapes]], probed: int) -> bool:
        """A name that leaves the inputs alone sizes the case when every larger value ran on the meta
        device and grew the outputs and parameters (`out_channels`; not a stride, which shrinks them,
        nor a reduction axis, which breaks the reference)."""
        if len(entries) != probed or any(None in s[n_inputs:] for _, s in entries):
            return False

        def rest(shapes: Shapes) -> int:
            return sum(math.prod(shape) for shape in shapes[n_inputs:] if shape is not None)

        larger = sorted((v, rest(s)) for v, s in entries)
        grown = [count for _, count in larger[-2:]]
        return rest(base) < grown[0] <= grown[-1] and len(base) > n_inputs

    def _record_parameters(self, model: ShapeModel, n_inputs: int, reasons: Mapping[Coord, str]) -> None:
        for name, value in self.roots.items():
            coords = [c for c in self.original if c.name == name]
            sizing = [c for c in coords if c in self.sizing]
            if sizing and all(c in self.output_sizing for c in sizing):
                reason = "sizes the outputs and the parameters, not the inputs"
            elif sizing:
                reason = "sizes " + "; ".join(self._sized_dims(model, n_inputs, c) for c in sizing)
            elif any(self.original[c] <= 0 for c in coords):
                reason = "not a positive size"
            else:
                reason = "; ".join(dict.fromkeys(reasons.get(c, "not probed") for c in coords))
            stored: int | list[int] = list(value) if isinstance(value, tuple) else int(value)
            self.report.parameters.append(
                SizeParameter(name=name, value=stored, sizes_inputs=bool(sizing), reason=reason)
            )

    def _sized_dims(self, model: ShapeModel, n_inputs: int, coord: Coord) -> str:
        before = model.shapes({})[:n_inputs]
        after = model.shapes({coord: model.base[coord] + 1})[:n_inputs]
        dims = [
            f"input {i} dim {j}"
            for i, (a, b) in enumerate(zip(before, after, strict=True))
            if a is not None and b is not None
            for j in range(len(a))
            if a[j] != b[j]
        ]
        label = f"{coord.label}: " if coord.index >= 0 else ""
        return label + (", ".join(dims) or "the inputs")

    # step 2: the base case

    def base(self, model: ShapeModel) -> _Variant | None:
        report = self.report
        sizing_original = {c: self.original[c] for c in self.sizing}
        original = _Variant("original", "original", sizing_original)
        total = max(report.original_numel or 0, report.original_output_numel or 0)
        target = self.budget
        memory = report.original_bytes or 0
        fits_memory = self.memory_limit is None or memory <= self.memory_limit
        self._note_batch_only()
        if total <= self.budget and fits_memory:
            self._validate([original])
            problem = self._problem(original, finite_needed=False)
            if problem is None:
                original.kept = True
                original.reason = "the task's own sizes fit the budget"
                if original.result is not None and not original.result.finite:
                    original.reason += " (its outputs are not all finite, as the task defines them)"
                return original
            original.reason = problem
            if not self._over_budget(original):
                report.error = f"the reference fails on the task's own sizes: {problem}"
                return None
            target = max(1, int(self.budget * self.budget / original.total * 0.95))
        else:
            what = "input elements" if report.original_output_numel is None else "input or output elements"
            estimated = " (estimated)" if report.original_estimated else ""
            original.result = ShapeProbeResult(numel=report.original_numel, output_numel=report.original_output_numel)
            original.reason = (
                f"{total} {what}{estimated}, over the budget of {self.budget}"
                if total > self.budget
                else f"needs about {_mb(memory)} MB, over {_mb(self.memory_limit or 0)} MB of the job's memory limit"
            )
            self.variants.append(original)
        if not self.sizing:
            report.error = "the case exceeds the budget and no module-level name sizes the inputs"
            self._too_large(total, memory)
            return None
        shrunk = self._shrunk(model, sizing_original, target)
        if shrunk is None:
            self._too_large(total, memory)
        return shrunk

    def _shrink_rules(self) -> list[tuple[str, Callable[[int, float], int]]]:
        """SHRINK_RULES, then one that keeps each size a multiple of the group counts it divides by:
        the task's integers that are left alone and divide it (`num_groups = 512` for `hidden = 8192`)."""
        rules = list(SHRINK_RULES)
        fixed = [v for c, v in self.original.items() if c not in self.sizing and v > 1 and c.index < 0]
        if fixed:

            def by_groups(value: int, factor: float) -> int:
                step = 1
                for divisor in fixed:
                    if value % divisor == 0:
                        step = math.lcm(step, divisor)
                step = step if value % step == 0 else 1
                return max(step, round(value * factor / step) * step)

            rules.append(("shrunk-groups", by_groups))
        return rules

    def _shrunk_holding_one(
        self, model: ShapeModel, original: Values, target: int, tried: list[_Variant]
    ) -> _Variant | None:
        """Where every proportional shrink breaks the reference, one size may be tied to something
        derivation does not vary (KernelBench's `LayerNorm((out_channels,))` on the last axis of a
        convolution's output needs `width` as it is): hold each size at the task's value in turn."""
        if len(original) < 2 or not any(v.result is not None and v.result.error for v in tried):
            return None
        targets = dict.fromkeys(sorted(original, key=lambda c: -original[c])[:_MAX_SINGLES], target)
        for attempt in range(_SHRINK_ATTEMPTS):
            candidates: dict[Coord, _Variant] = {}
            for coord, goal in targets.items():
                fits = self._fits(model, goal)
                held = original[coord]
                rest = {c: v for c, v in original.items() if c != coord}

                def fits_held(
                    values: Values, coord: Coord = coord, held: int = held, fits: Callable[[Values], bool] = fits
                ) -> bool:
                    return fits({**values, coord: held})

                values = shrink_values(rest, fits_held, shrink_aligned) or shrink_values(rest, fits_held, shrink_plain)
                if values is not None:
                    name = f"shrunk-holding-{coord.label}" + (f"-try{attempt + 1}" if attempt else "")
                    candidates[coord] = _Variant(name, "shrunk", {**values, coord: held})
            self._validate(list(candidates.values()))
            tried += candidates.values()
            retry: dict[Coord, int] = {}
            for coord, variant in candidates.items():
                if variant.result is None:
                    continue
                problem = self._problem(variant)
                if problem is None:
                    variant.kept = True
                    variant.reason = f"every size shrunk but one, held at the task's value (as {variant.name})"
                    variant.name = "shrunk"
                    return variant
                variant.reason = problem
                if self._over_budget(variant):
                    excess = max(variant.total / self.budget, self._memory_excess(variant))
                    retry[coord] = max(1, int(targets[coord] * (1 / excess) ** 1.5 * 0.95))
            if not retry:
                return None
            targets = retry
        return None

    def _shrunk_batch_only(
        self, model: ShapeModel, original: Values, target: int, tried: list[_Variant]
    ) -> _Variant | None:
        """A whole network may need its resolution (a final `AvgPool2d(7)` after five stride-2 stages):
        shrink the batch alone, every other size held at the task's value."""
        batch = [c for c in original if "batch" in c.name.lower()]
        if not batch or len(batch) == len(original):
            return None
        held = {c: v for c, v in original.items() if c not in batch}
        fits = self._fits(model, target)
        values = shrink_values({c: original[c] for c in batch}, lambda v: fits({**v, **held}), shrink_plain)
        if values is None:
            return None
        variant = _Variant("shrunk-batch-only", "shrunk", {**values, **held})
        self._validate([variant])
        tried.append(variant)
        problem = self._problem(variant) if variant.result is not None else "not run"
        if problem is not None:
            variant.reason = problem
            return None
        variant.kept = True
        variant.reason = "the batch shrunk alone, every other size held at the task's value (as shrunk-batch-only)"
        variant.name = "shrunk"
        self.report.notes.append(
            "only the batch could be shrunk: the reference needs the task's other sizes (a resolution, say)"
        )
        return variant

    def _note_batch_only(self) -> None:
        names = list(dict.fromkeys(c.name for c in self.sizing))
        if len(names) == 1 and "batch" in names[0].lower():
            self.report.notes.append(
                f"only the batch ({names[0]}) could be varied: the other sizes are literals or constructor "
                "arguments that do not size the inputs, so the hidden cases differ in batch and values only"
            )

    def _too_large(self, total: int, memory: int) -> None:
        """No case fits: say what was tried and which option would make a case fit."""
        tried = [v for v in self.variants if v.kind in ("original", "shrunk") and v.result is not None]
        rows: list[dict[str, Any]] = []
        for variant in tried:
            r = variant.result
            assert r is not None
            rows.append(
                {
                    "name": variant.name,
                    "overrides": _jsonable(overrides_of(self.roots, variant.values))
                    if variant.kind != "original"
                    else {},
                    "elements": variant.total or total,
                    "megabytes": _mb(_result_bytes(r))
                    if r.ran
                    else _mb(memory)
                    if variant.kind == "original"
                    else None,
                    "why": variant.reason,
                }
            )
        valid = [v for v in tried if v.result is not None and v.result.ran and v.result.error is None]
        smallest = min(valid, key=lambda v: v.total, default=None)
        elements = smallest.total if smallest is not None else total
        needed = _result_bytes(smallest.result) if smallest is not None and smallest.result else memory
        fixes: list[str] = []
        if elements > self.budget:
            fixes.append(f"--max-elements {elements}")
        if self.memory_limit is not None and needed > self.memory_limit:
            fixes.append(f"--memory {math.ceil(needed / MEMORY_SHARE / 2**20)}")
        fixed = [p.name for p in self.report.parameters if not p.sizes_inputs and isinstance(p.value, int)]
        if not self.sizing and fixed:
            fixes.append("smaller values of " + ", ".join(f"--set {n}=..." for n in fixed[:4]))
        why = self.report.error or "no case fits"
        self.report.too_large = TooLarge(
            message=f"no case of this task fits the budget of {self.budget} elements and "
            f"{_mb(self.memory_limit or 0)} MB (half the job's memory limit): {why}",
            tried=rows,
            fixes=fixes,
        )

    def _first_shrink(
        self,
        model: ShapeModel,
        original: Values,
        target: int,
        rules: list[ShrinkRule],
        tried: list[_Variant],
    ) -> tuple[_Variant | None, int]:
        """The first rule whose shrink the reference accepts (all validated in one job), shrinking again
        while the real outputs turn out over the budget; and the target it ended at."""
        for attempt in range(_SHRINK_ATTEMPTS):
            candidates: list[_Variant] = []
            for name, rule, per_coord in rules:
                values = shrink_values(original, self._fits(model, target), rule, per_coord)
                if values is not None:
                    candidates.append(_Variant(name, "shrunk", values))
            self._validate(candidates)
            tried += candidates
            chosen: _Variant | None = None
            for variant in candidates:
                problem = self._problem(variant)
                if variant.result is None:
                    continue
                if problem is not None:
                    variant.reason = problem
                elif chosen is None:
                    chosen = variant
                    variant.kept = True
                    variant.reason = f"the task's proportions, shrunk to fit the budget (as {variant.name})"
                else:
                    variant.reason = f"valid, but {chosen.name} comes first (kept as shrunk)"
            if chosen is not None:
                chosen.name = "shrunk"
                return chosen, target
            over = [v for v in candidates if self._over_budget(v)]
            if not over:
                break
            for variant in candidates:
                variant.name = f"{variant.name}-try{attempt + 1}"
            excess = max(max(v.total / self.budget, self._memory_excess(v)) for v in over)
            target = max(1, int(target * (1 / excess) ** 1.5 * 0.95))
        return None, target

    def _input_alignments(self, original: Values) -> list[ShrinkRule]:
        """Where every shrink breaks the reference, a network may halve its resolution k times (a U-Net's
        poolings, then its skip connections' concatenations): the sizes of the inputs keep the task's
        factor of 2**k, for k = 3 to 6 (at least 2**k each), while the sizes that only size the outputs
        and the parameters (`features`) shrink plainly, so that a large network still fits."""
        inputs = [c for c in original if c not in self.output_sizing]
        rules: list[ShrinkRule] = []
        for k in range(3, 7):
            align = 2**k
            if not any(original[c] % align == 0 for c in inputs):
                break
            rules.append((f"shrunk-inputs-{align}", shrink_plain, dict.fromkeys(inputs, shrink_aligned_to(align))))
        return rules

    def _shrunk(self, model: ShapeModel, original: Values, target: int) -> _Variant | None:
        """The first valid proportional shrink; shrinks again where the outputs turn out too large."""
        tried: list[_Variant] = []
        rules: list[ShrinkRule] = [(name, rule, None) for name, rule in self._shrink_rules()]
        chosen, target = self._first_shrink(model, original, target, rules, tried)
        if chosen is not None:
            return chosen
        held = self._shrunk_holding_one(model, original, target, tried)
        if held is None and any(v.result is not None and v.result.error for v in tried):
            held, _ = self._first_shrink(model, original, target, self._input_alignments(original), tried)
        held = held or self._shrunk_batch_only(model, original, target, tried)
        if held is not None:
            return held
        self.report.error = (
            "the reference is not valid on any shrunk size: "
            + "; ".join(f"{v.name}: {v.reason}" for v in tried if v.result is not None)
            if tried
            else f"no shrink of the sizes brings the case under {self.budget} elements"
        )
        return None

    # step 3: variants of the base

    def variants_of(self, base: _Variant, model: ShapeModel) -> None:
        values = base.values
        grow = model.numel({c: odd_size(x) for c, x in values.items()}) <= self.budget
        rules: dict[Kind, Callable[[Values], Values]] = {
            "odd": lambda v: {c: odd_size(x, grow=grow) for c, x in v.items()},
            "prime": prime_sizes,
            "one": lambda v: dict.fromkeys(v, 1),
        }
        joint = [_Variant(kind, kind, rule(values)) for kind, rule in rules.items()]
        transforms: list[_Variant] = []
        distributions: tuple[tuple[Kind, InputTransform], ...] = (("scaled", SCALED), ("shifted", SHIFTED))
        for kind, transform in distributions:
            variant = _Variant(kind, kind, values, inputs=transform)
            if self.floating_inputs:
                transforms.append(variant)
            else:
                variant.reason = "the task has no floating-point inputs"
                self.variants.append(variant)
        quiet = self._quiet_outputs(base.result)
        widened: list[_Variant] = []
        if quiet:
            reason = "; ".join(quiet.values())
            self.report.low_signal = LowSignal(
                reason=f"on the task's own inputs, the reference's {reason}", extra_cases=[]
            )
            if self.floating_inputs:
                widened = [_Variant(name, "widened", values, inputs=t) for name, t in WIDENED]
            else:
                self.report.notes.append("low-signal, and the task has no floating-point inputs to widen")
        alone = self._alone(values, model, small=True)
        self._validate(joint + transforms + widened + list(alone.values()))
        for variant in joint + transforms:
            self._settle(variant, "every size at once" if variant in joint else "the base sizes, other values")
        self._settle_widened(widened, quiet)
        self._settle_alone(values, model, alone)
        failed = [v for v in joint if v.result is not None and not v.kept and not self._over_budget(v)]
        if failed and len(self.sizing) > 1:
            self._one_size_at_a_time(values, failed, rules)

    def _alone_coords(self, base: Values) -> list[Coord]:
        """The sizes worth varying alone: those whose task value is past a block the base case stays under."""
        reach = {c: next((v for v in BLOCK_LADDER if v <= self.original[c]), 0) for c in self.sizing}
        coords = [c for c in self.sizing if reach[c] > base[c]]
        return sorted(coords, key=lambda c: (-self.original[c], c))[:MAX_ALONE]

    def _alone(self, base: Values, model: ShapeModel, *, small: bool) -> dict[Coord, _Variant]:
        """For each size worth it, a case with that size alone past the usual block sizes (the largest value
        of `BLOCK_LADDER` that the task's own value reaches and the case's share of the budget holds), the
        other sizes small (`small`) or at the base case's values."""
        coords = self._alone_coords(base)
        share = self._fits(model, max(1, self.budget // max(1, len(coords))))
        variants: dict[Coord, _Variant] = {}
        for coord in coords:
            others = {c: min(v, ALONE_SMALL) if small else v for c, v in base.items() if c != coord}
            for value in BLOCK_LADDER:
                if base[coord] < value <= self.original[coord] and share({**others, coord: value}):
                    name = f"alone-{coord.label}" + ("" if small else "-at-base")
                    variants[coord] = _Variant(name, "alone", {**others, coord: value})
                    break
        return variants

    def _settle_alone(self, base: Values, model: ShapeModel, alone: Mapping[Coord, _Variant]) -> None:
        """Keep the valid cases that vary one size alone; where the reference rejects the other sizes small
        (a size must divide by a group count, or equal another), try them at the base case's values."""
        retry: list[Coord] = []
        for coord, variant in alone.items():
            self._settle_one_alone(coord, variant, "the others small")
            result = variant.result
            if not variant.kept and result is not None and result.error is not None:
                retry.append(coord)
        if not retry:
            return
        at_base = {c: v for c, v in self._alone(base, model, small=False).items() if c in retry}
        self._validate(list(at_base.values()))
        for coord, variant in at_base.items():
            self._settle_one_alone(coord, variant, "the others at the base case's sizes")

    def _settle_one_alone(self, coord: Coord, variant: _Variant, others: str) -> None:
        if variant.result is None:
            return
        self._settle(variant, "")
        if variant.kept:
            variant.reason = f"{coord.label} alone past one block ({variant.values[coord]}), {others}"

    def _quiet_outputs(self, result: ShapeProbeResult | None) -> dict[int, str]:
        """The reference's outputs that a copy or a constant kernel would match on these inputs, and why."""
        if result is None or not result.signal:
            return {}
        return {s.output: why for s in result.signal if (why := quiet_output(s, self.tolerances)) is not None}

    def _settle_widened(self, widened: list[_Variant], quiet: Mapping[int, str]) -> None:
        """Keep the first widened variant that is valid and gives signal to outputs that had none."""
        chosen: _Variant | None = None
        for variant in widened:
            if variant.result is None:
                continue
            problem = self._problem(variant)
            still = self._quiet_outputs(variant.result)
            if problem is None and not set(still) < set(quiet):
                problem = "on these inputs too, the reference's " + "; ".join(still.values())
            if problem is not None:
                variant.reason = problem
            elif chosen is not None:
                variant.reason = f"valid, but {chosen.name} is kept"
            else:
                chosen = variant
                variant.kept = True
                variant.reason = (
                    f"low-signal task: on {variant.inputs.label() if variant.inputs else 'these'} inputs the "
                    "reference's output differs from every input and varies; copies are judged here"
                )
        if self.report.low_signal is not None:
            if chosen is not None:
                self.report.low_signal.extra_cases.append(chosen.name)
            elif widened:
                self.report.notes.append(
                    "low-signal task, and no widened input distribution gave the reference's output signal: "
                    "copies are judged on the task's own inputs"
                )

    def _settle(self, variant: _Variant, what: str) -> None:
        if variant.result is None:
            return
        problem = self._problem(variant)
        variant.kept = problem is None
        variant.reason = problem or f"the reference is valid on {what}"

    def _one_size_at_a_time(
        self, base: Values, failed: list[_Variant], rules: Mapping[Kind, Callable[[Values], Values]]
    ) -> None:
        """Vary each size alone where varying all at once broke the reference, then combine the good ones."""
        singles: dict[Kind, list[_Variant]] = {}
        for joint in failed:
            changed = rules[joint.kind](base)
            coords = [c for c in self.sizing if changed[c] != base[c]]
            coords = sorted(coords, key=lambda c: -base[c])[:_MAX_SINGLES]
            singles[joint.kind] = [
                _Variant(f"{joint.kind}-{c.label}", joint.kind, {**base, c: changed[c]}) for c in coords
            ]
        tied: dict[Kind, _Variant] = {
            joint.kind: _Variant("prime-tied", "prime", prime_sizes(base, distinct=False))
            for joint in failed
            if joint.kind == "prime"
        }
        self._validate([v for group in singles.values() for v in group] + list(tied.values()))
        combined: list[tuple[_Variant, list[_Variant]]] = []
        for kind, group in singles.items():
            alternative = tied.get(kind)
            if alternative is not None and alternative.result is not None:
                self._settle(alternative, "every size, equal sizes kept equal")
                if alternative.kept:
                    for variant in group:
                        variant.reason = self._problem(variant) or f"valid, but {alternative.name} is kept"
                    continue
            good = [v for v in group if v.result is not None and self._problem(v) is None]
            for variant in group:
                if variant.result is not None and variant not in good:
                    variant.reason = self._problem(variant) or ""
            if len(good) >= 2:
                values = dict(base)
                for variant in good:
                    values.update({c: x for c, x in variant.values.items() if x != base[c]})
                combined.append((_Variant(f"{kind}-partial", kind, values), good))
            elif good:
                self._settle(good[0], "this size alone")
        self._validate([variant for variant, _ in combined])
        for variant, good in combined:
            self._settle(variant, "the sizes that keep it valid")
            if variant.kept:
                for single in good:
                    single.reason = f"valid; combined into {variant.name}"
            else:
                self._settle(good[0], "this size alone")
                for single in good[1:]:
                    single.reason = f"valid, but {good[0].name} is kept"

    # the report

    def finish(self, base: _Variant | None) -> Derivation:
        order = {
            "original": 0,
            "shrunk": 1,
            "odd": 2,
            "prime": 3,
            "one": 4,
            "alone": 5,
            "scaled": 6,
            "shifted": 7,
            "widened": 8,
        }
        variants = sorted(self.variants, key=lambda v: (not v.kept, order[v.kind]))
        on_original = base is not None and base.kind == "original"
        for variant in variants:
            result = variant.result
            same_sizes = variant.kind == "original" or (
                on_original and variant.kind in ("scaled", "shifted", "widened")
            )
            overrides = {} if same_sizes else overrides_of(self.roots, variant.values)
            self.report.candidates.append(
                DerivedCase(
                    name=variant.name,
                    kind=variant.kind,
                    overrides=_jsonable(overrides),
                    inputs=variant.inputs,
                    kept=variant.kept,
                    visible=variant is base,
                    reason=variant.reason,
                    numel=result.numel if result is not None else None,
                    output_numel=result.output_numel if result is not None else None,
                )
            )
        return self.report


def _result_bytes(result: ShapeProbeResult) -> int:
    """Estimated memory of a probed case: inputs, outputs and parameters, each in two copies."""
    elements = (result.numel or 0) + (result.output_numel or 0) + (result.param_numel or 0)
    return elements * BYTES_PER_ELEMENT


def _mb(count: int) -> int:
    return math.ceil(count / 2**20)


def _jsonable(overrides: Mapping[str, OverrideValue]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in overrides.items()}


def derive(
    task: Task,
    sizes: Mapping[str, object],
    run: ProbeRunner,
    *,
    device: str = "cpu",
    max_elements: int | None = None,
    memory_mb: int | None = None,
    tolerances: Mapping[str, Tolerance] | None = None,
) -> Derivation:
    """Derive cases for `task` (whose module-level values once run are `sizes`), probing through `run`.

    `memory_mb`: the memory limit of the jobs the cases will run in; no case is kept whose estimated
    memory (inputs, outputs, parameters, float64 copies) exceeds `MEMORY_SHARE` of it. `tolerances`: the
    task's per-dtype tolerances, which decide whether an output is low-signal (near zero, constant, equal
    to an input)."""
    began = time.monotonic()
    budget = max_elements or default_max_elements(device)
    deriver = _Deriver(task, sizes, run, device, budget, memory_mb, tolerances)
    base: _Variant | None = None
    model = deriver.map_inputs()
    if model is not None:
        base = deriver.base(model)
        if base is not None:
            deriver.variants_of(base, model)
    report = deriver.finish(base)
    report.seconds = round(time.monotonic() - began, 3)
    return report
