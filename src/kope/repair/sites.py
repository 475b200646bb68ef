"""Where to edit first: candidate edits ranked by the diagnosis's hypotheses and its evidence.

Hypotheses order the operators (an operator whose taxonomy id the diagnosis ranks first comes
first); the evidence orders the sites: the lines the bounds checker names, the lines of the code
cues, and the launch arguments when the mismatch has the shape of a layout bug (rows from a point
on, whole rows, permuted or transposed values, right only on square sizes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kope.diagnose.report import Diagnosis

RELATED: dict[str, tuple[str, ...]] = {
    "compare-flip": ("missing-mask", "loop-bound", "padding-in-reduction"),
    "floor-to-cdiv": ("loop-bound", "uninitialized-output"),
    "loop-bound": ("index-shift", "uninitialized-output"),
    "stride-argument": ("broadcast-error", "missing-batch-offset", "index-shift"),
    "stride-name": ("broadcast-error", "missing-batch-offset"),
    "stride-factor": ("broadcast-error",),
    "stride-swap": ("broadcast-error", "transposed"),
    "transposed-operands": ("broadcast-error", "index-shift", "missing-batch-offset"),
    "size-swap": ("grid-too-small", "uninitialized-output", "missing-mask"),
    "shape-unpack": ("grid-too-small", "wrong-normalizer", "missing-mask"),
    "grid-axis": ("grid-too-small", "missing-batch-offset"),
    "grid-product": ("grid-too-small", "missing-batch-offset"),
    "complement": ("wrong-normalizer", "wrong-epsilon"),
    "offset-term": ("index-shift", "wrong-stride", "uninitialized-output"),
    "index-shift": ("wrong-stride",),
    "other-identity": ("missing-mask", "wrong-reduction-init", "numerical-instability"),
    "reduction-init": ("accumulator-reset", "padding-in-reduction"),
    "accumulator-move": ("wrong-reduction-init",),
    "scan-kind": ("loop-bound",),
    "constant": ("wrong-epsilon", "wrong-normalizer", "numerical-instability"),
    "missing-factor": ("wrong-normalizer",),
    "drop-operation": ("wrong-constant", "precision-loss", "numerical-instability"),
    "add-mask": ("padding-in-reduction", "mask-off-by-one"),
    "max-subtraction": ("wrong-constant",),
    "broadcast-swap": ("wrong-stride",),
    "compare-operand": ("mask-off-by-one", "padding-in-reduction", "loop-bound", "broadcast-error"),
    "grid-swap": ("uninitialized-output", "missing-batch-offset", "wrong-stride"),
    "pid-swap": ("wrong-stride", "missing-batch-offset", "uninitialized-output", "grid-too-small"),
    "floor-mod": ("index-shift", "wrong-stride"),
    "sibling-offset": ("missing-batch-offset", "wrong-stride"),
    "loop-offset": ("missing-batch-offset", "loop-bound"),
    "divisor": ("wrong-constant", "wrong-epsilon"),
    "upcast": ("wrong-constant", "numerical-instability", "dtype-mismatch"),
    "advance-stride": ("loop-bound", "missing-batch-offset"),
    "reduction-swap": ("wrong-reduction-init", "padding-in-reduction", "index-shift"),
    "index-scalar": ("index-shift", "missing-batch-offset", "loop-bound"),
    "block-scale": ("grid-too-small", "index-shift", "missing-batch-offset"),
    "mask-clause": ("missing-mask", "mask-off-by-one"),
    "accumulate": ("wrong-reduction-init",),
    "nested-factor": ("wrong-normalizer", "wrong-epsilon"),
    "host-dtype": ("precision-loss", "index-shift"),
    "sign": ("numerical-instability", "wrong-normalizer"),
    "branch-swap": ("numerical-instability", "padding-in-reduction"),
    "reduce-axis": ("wrong-stride", "index-shift"),
    "xlogy": ("wrong-constant", "padding-in-reduction"),
    "dead-value": ("wrong-normalizer", "wrong-epsilon", "precision-loss", "accumulator-reset", "numerical-instability"),
    "dead-position": ("index-shift", "wrong-stride", "uninitialized-output", "grid-too-small"),
    "dead-stride": ("broadcast-error", "index-shift", "missing-batch-offset"),
    "dead-mask": ("mask-off-by-one", "padding-in-reduction", "uninitialized-output"),
    "zero-init": ("missing-atomic", "accumulator-reset", "wrong-reduction-init"),
    "true-division": ("wrong-normalizer", "precision-loss"),
    "into-call": ("wrong-constant", "numerical-instability"),
    "clamp-exponent": ("wrong-constant", "precision-loss"),
    "abs-argument": ("wrong-constant",),
    "padding-where": ("missing-mask", "wrong-normalizer"),
    "index-divide": ("wrong-stride", "index-shift"),
    "named-index": ("uninitialized-output", "missing-batch-offset"),
    "atomic-store": ("accumulator-reset", "uninitialized-output"),
    "alloc-dtype": ("precision-loss", "uninitialized-output"),
    "argument-swap": ("wrong-normalizer", "loop-bound", "missing-mask"),
    "running-init": ("accumulator-reset", "padding-in-reduction"),
    "drop-downcast": ("dtype-mismatch", "numerical-instability"),
    "log-base": ("numerical-instability", "wrong-normalizer"),
    "shared-term": ("wrong-constant", "wrong-normalizer"),
    "index-factor": ("wrong-stride", "missing-batch-offset"),
    "if-branch": ("precision-loss", "dtype-mismatch"),
    "log-one-plus": ("numerical-instability",),
    "host-size": ("grid-too-small", "wrong-normalizer"),
    "name-swap": ("broadcast-error", "missing-batch-offset", "index-shift"),
    "drop-term": ("wrong-constant", "index-shift"),
    "int-literal": ("loop-bound", "mask-off-by-one"),
}
"""Operator -> other taxonomy ids its edits often repair (counted at half weight)."""

CUE_WEIGHT = 2.5
"""What a site an operator finds suspicious on its own (`Edit.cue`) adds: as much as a hypothesis ranked half as
high as the first, so that a bug the diagnosis does not name is still tried early where the code says so."""

GROUNDED_CUE_WEIGHT = 8.0
"""What a grounded cue (`Edit.grounded`: a contradiction between the kernel's strides and its sizes, or the
reference's transposes) adds on top of `CUE_WEIGHT`: the edit goes before the first hypothesis's recipe (4 + 3). An
operator grounds at most one edit per launch, so a wrong one costs one evaluation."""

SAME_OPERATOR_PENALTY = 0.35
"""Subtracted from a candidate's priority for each better-ranked candidate of the same operator: one operator with
many sites does not use the whole budget before the others are tried. Measured against taking turns per taxonomy
id with the first hypothesis's family spared (issue 13's second round): as good on the second hand-written corpus
(44/50 both), better on the mutation suite (docs/results/benchmarks.md)."""


GENERIC = frozenset({"name-swap", "drop-term", "int-literal", "if-branch"})
"""The generic operators (`kope.bugs.generic`): one-token edits that know only the grammar."""

GENERIC_OFFSET = -1.0
"""What a generic operator's edit starts with: after the first turns of the specific operators, which know the form
of the bug they repair, unless the evidence points at its line."""


def operator_penalty(better: int) -> float:
    """What a candidate loses for `better` better-ranked candidates of its operator."""
    return SAME_OPERATOR_PENALTY * better


LAYOUT_FEATURES = (
    "prefix_correct",
    "rows_from",
    "whole_rows",
    "permuted",
    "transposed",
    "square_right",
    "symmetric_right",
)
"""Features of a mismatch that point at addresses: launch arguments and stride parameters first."""


@dataclass
class Evidence:
    """Weights per source line, and the hypotheses' weights per taxonomy id."""

    lines: dict[int, float] = field(default_factory=dict)
    reasons: dict[int, list[str]] = field(default_factory=dict)
    patterns: dict[str, float] = field(default_factory=dict)
    pattern_rank: dict[str, int] = field(default_factory=dict)
    pointed: dict[str, tuple[float, str]] = field(default_factory=dict)
    """Operators a hypothesis's pattern points at (its `edits`): the best such hypothesis's weight and id."""
    layout: bool = False
    scale: float | None = None
    """The measured constant c of output = c x reference (the diagnosis's `scale`), when the output is scaled."""

    @classmethod
    def of(cls, diagnosis: Diagnosis | None) -> Evidence:
        evidence = cls()
        if diagnosis is None:
            return evidence
        hypotheses = [*diagnosis.hypotheses, *diagnosis.later_hypotheses]
        top = max((h.score for h in hypotheses), default=0.0) or 1.0
        for rank, hypothesis in enumerate(hypotheses):
            if hypothesis.pattern not in evidence.patterns:
                evidence.patterns[hypothesis.pattern] = max(0.05, hypothesis.score / top)
                evidence.pattern_rank[hypothesis.pattern] = rank + 1
            for name in hypothesis.edits:
                if name not in evidence.pointed:
                    evidence.pointed[name] = (evidence.patterns[hypothesis.pattern], hypothesis.pattern)
        for event in diagnosis.bounds:
            if event.line is None:
                continue
            evidence.add(event.line, 3.0, f"the bounds checker names line {event.line} ({event.kind})")
            evidence.add(event.line - 1, 1.0, f"next to out-of-bounds line {event.line}")
            evidence.add(event.line + 1, 1.0, f"next to out-of-bounds line {event.line}")
        for cue in diagnosis.cues:
            evidence.add(cue.line, 2.0, f"code cue {cue.cue}")
        evidence.layout = any(getattr(diagnosis.features, name) for name in LAYOUT_FEATURES)
        if diagnosis.features.scaled and diagnosis.features.scale:
            evidence.scale = diagnosis.features.scale
        return evidence

    def add(self, line: int, weight: float, reason: str) -> None:
        if line <= 0:
            return
        self.lines[line] = self.lines.get(line, 0.0) + weight
        self.reasons.setdefault(line, []).append(reason)

    def hypothesis_weight(self, operator: str, label: str) -> float:
        weight = max(self.patterns.get(label, 0.0), self.pointed.get(operator, (0.0, ""))[0])
        for other in RELATED.get(operator, ()):
            weight = max(weight, 0.5 * self.patterns.get(other, 0.0))
        return weight

    def site_weight(self, operator: str, line: int, launch_lines: Sequence[int] = (), cue: str = "") -> float:
        weight = self.lines.get(line, 0.0) + (CUE_WEIGHT if cue else 0.0)
        at_launch = operator in ("stride-argument", "transposed-operands")
        if self.layout and (operator.startswith("stride") or at_launch) and (not at_launch or line in launch_lines):
            weight += 2.0
        elif self.layout and operator == "offset-term":
            weight += 1.0
        return weight

    def why(self, operator: str, label: str, line: int, cue: str = "") -> str:
        parts = [cue] if cue else []
        if label in self.pattern_rank:
            parts.append(f"hypothesis #{self.pattern_rank[label]} {label}")
        elif operator in self.pointed:
            pattern = self.pointed[operator][1]
            parts.append(f"hypothesis #{self.pattern_rank[pattern]} {pattern} names this edit")
        else:
            related = [o for o in RELATED.get(operator, ()) if o in self.pattern_rank]
            if related:
                parts.append(f"related to hypothesis #{self.pattern_rank[related[0]]} {related[0]}")
        parts += self.reasons.get(line, [])[:2]
        if self.layout and operator.startswith(("stride", "offset")):
            parts.append("the mismatch looks like a layout bug")
        return "; ".join(parts) or "no evidence (tried in order)"


def priority(
    evidence: Evidence,
    operator: str,
    label: str,
    line: int,
    *,
    recipe: bool = False,
    launch_lines: Sequence[int] = (),
    cue: str = "",
    grounded: bool = False,
) -> float:
    """Best-first order: the hypothesis weight counts most, then the site's evidence; a recipe (a fix
    written for the pattern) goes before a generic edit of the same hypothesis. A grounded cue goes
    before both (`GROUNDED_CUE_WEIGHT`)."""
    return (
        4.0 * evidence.hypothesis_weight(operator, label)
        + evidence.site_weight(operator, line, launch_lines, cue)
        + (GROUNDED_CUE_WEIGHT if cue and grounded else 0.0)
        + (3.0 if recipe else 0.0)
        + (GENERIC_OFFSET if operator in GENERIC else 0.0)
    )
