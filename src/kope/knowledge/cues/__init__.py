"""Code cues: detectors over a kernel's source that point at a known bug.

Each cue is a function from the parsed candidate to the lines where the cue appears. Patterns
name cues in `code_cues`; `kope kb validate` checks the names exist. Cues look at Triton kernel
bodies (functions decorated with `triton.jit`) unless they say otherwise.

The cues live in one module per bug family (masks, grid, indexing, reductions, constants, writes,
numerics, precision); this package holds the registry and runs them in one fixed order.
"""

from __future__ import annotations

from kope.knowledge.cues import constants, grid, indexing, masks, numerics, precision, reductions, writes
from kope.knowledge.cues._registry import CUES, DESCRIPTIONS, CueHit, Detector, Source, cue, detect
from kope.knowledge.cues.constants import KNOWN_CONSTANTS, near_constant

__all__ = [
    "CUES",
    "DESCRIPTIONS",
    "KNOWN_CONSTANTS",
    "ORDER",
    "CueHit",
    "Detector",
    "Source",
    "cue",
    "detect",
    "near_constant",
]

_FAMILIES = (masks, grid, indexing, reductions, constants, writes, numerics, precision)

ORDER = (
    "load-without-mask",
    "store-without-mask",
    "mask-inclusive-bound",
    "padding-reaches-reduction",
    "grid-floor-div",
    "grid-axis-missing",
    "loop-stops-early",
    "store-loop-skips-start",
    "single-inner-stride",
    "duplicate-stride-arg",
    "foreign-stride",
    "unused-stride-param",
    "unused-program-id",
    "offset-literal-shift",
    "block-relative-index",
    "divide-by-block-size",
    "divide-by-n-minus-one",
    "suspicious-constant",
    "exp2-without-log2e",
    "store-shared-address",
    "partial-store-into-empty",
    "half-precision-cast",
    "exp-without-max-shift",
    "inf-minus-inf",
    "eps-outside-sqrt",
    "rsqrt-without-eps",
    "unused-eps-param",
    "accumulator-overwritten-in-loop",
    "max-init-zero",
    "online-normalizer-init",
    "broadcast-axis-mismatch",
    "integer-buffer-for-float",
    "float-cast-to-int",
    "half-precision-buffer",
)
"""The order `detect` runs the cues in, and so the order of its hits (and of a diagnosis's `cues`): the
order of the single module they came from. A cue missing here runs after these."""


def _in_order(registry: dict[str, object], order: tuple[str, ...]) -> None:
    ordered = {**{name: registry[name] for name in order if name in registry}, **registry}
    registry.clear()
    registry.update(ordered)


_in_order(CUES, ORDER)  # type: ignore[arg-type]
_in_order(DESCRIPTIONS, ORDER)  # type: ignore[arg-type]
