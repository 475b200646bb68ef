"""What a repair prompt states as findings: kope's own analysis, said plainly to a model.

Three findings, each read from analysis that exists elsewhere (one concept, one place):

- the value region the wrong elements sit in (`OutputSignature.region`, measured on the shown cases only);
- the reference's formulas: the activations its `forward` applies (kope.bugs.reference), with every
  parameter's value (given or PyTorch's default) and the verified table's formula in Triton's terms;
- several programs writing one output element (the cue `store-shared-address` of kope.bugs.writes);
- contradictions the kernel's source shows: the cues of the offline search's grounded edits (kope.bugs.edit,
  `Edit.grounded`: a pooled size that keeps the partial window where the reference drops it, a block that never
  moves while its partner does...), said as facts with their lines, without the edit.

    found = findings(diagnosis, reference_source, kernel_source)
    if found:
        print(found.text())
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from kope.bugs.cue import CueHit
from kope.bugs.edit import Program, edits
from kope.bugs.reference import FORMULAS, Activation, activations
from kope.diagnose.report import Diagnosis

SHARED_ADDRESS = "store-shared-address"
"""The cue (kope.bugs.writes) that says several programs store to one address."""

_REGIONS = {
    "reference < 0": "where the reference's value is negative",
    "reference > 0": "where the reference's value is positive",
    "|reference| large": "where the reference's magnitude is large (its largest tenth)",
    "|reference| small": "where the reference's magnitude is small (its smallest tenth)",
}


class RegionFinding(BaseModel):
    region: str
    """`OutputSignature.region`: `reference < 0`, `reference > 0`, `|reference| large`, `|reference| small`."""
    wrong: int
    numel: int


class FormulaFinding(BaseModel):
    name: str
    """The verified table's name (`silu`, `elu`, `softplus`)."""
    params: dict[str, float] = Field(default_factory=dict)
    """Every parameter of the formula: the value the reference gives, else PyTorch's default."""
    defaults: list[str] = Field(default_factory=list)
    """The parameters the reference leaves at their default."""
    triton: str
    """The formula for an input `x`, in Triton's terms (numerically stable; checked against PyTorch in tests)."""
    line: int = 0
    gated: bool = False
    """The reference multiplies the activation by its own input (`x * F.hardswish(x)`)."""


class SourceFinding(BaseModel):
    line: int
    text: str
    """What the source shows there (a grounded edit's cue)."""


class Findings(BaseModel):
    region: RegionFinding | None = None
    formulas: list[FormulaFinding] = Field(default_factory=list)
    shared_stores: list[CueHit] = Field(default_factory=list)
    contradictions: list[SourceFinding] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.region or self.formulas or self.shared_stores or self.contradictions)

    def text(self, *, formulas: bool = True) -> str:
        """The findings as prompt lines; `formulas` False leaves out the Triton expressions (a shorter level)."""
        lines: list[str] = []
        if self.formulas:
            applied = ", then ".join(_called(f) for f in self.formulas)
            lines.append(f"- The reference applies {applied}.")
            if formulas:
                seen: set[str] = set()
                for found in self.formulas:
                    key = f"{found.name}{sorted(found.params.items())}"
                    if key not in seen:
                        seen.add(key)
                        lines.append(f"  - {_called(found)} of an input x, in Triton: `{found.triton}`")
        if self.region is not None:
            where = _REGIONS.get(self.region.region, f"where {self.region.region}")
            lines.append(
                f"- Wrong only in one value region: {where}; right elsewhere "
                f"({self.region.wrong} of {self.region.numel} elements wrong on the case you are shown)."
            )
        for hit in self.shared_stores:
            lines.append(
                f"- Several programs write one output element: line {hit.line} `{hit.text}` stores to an address "
                "that does not depend on tl.program_id, and the kernel is launched over more than one program, so "
                "each program overwrites what the others wrote (the last one wins). If each program computes a partial "
                "of that element, add into a zeroed output with tl.atomic_add, or store one partial per program and "
                "combine them in a second pass; normalise (divide by the count) once, after every partial is in. If "
                "each program owns other elements, the address is missing the program's offset."
            )
        for contradiction in self.contradictions:
            lines.append(
                f"- The source contradicts itself or the reference at line {contradiction.line}: {contradiction.text}."
            )
        return "\n".join(lines)


def findings(diagnosis: Diagnosis | None, reference: str, kernel: str = "") -> Findings:
    """The findings of a failed diagnosis; none for a passing one (nor without a diagnosis)."""
    if diagnosis is None or diagnosis.status != "fail":
        return Findings()
    return Findings(
        region=_region(diagnosis),
        formulas=[_formula(a) for a in activations(reference)],
        shared_stores=[hit for hit in diagnosis.cues if hit.cue == SHARED_ADDRESS],
        contradictions=_contradictions(kernel, reference),
    )


def _contradictions(kernel: str, reference: str) -> list[SourceFinding]:
    """The cues of the grounded edits kope's operators find in `kernel`: one per line, the first operator's."""
    program = Program.parse(kernel, reference) if kernel else None
    if program is None:
        return []
    found: dict[int, SourceFinding] = {}
    for edit in edits(program):
        if edit.grounded and edit.cue and edit.line not in found:
            found[edit.line] = SourceFinding(line=edit.line, text=edit.cue)
    return sorted(found.values(), key=lambda f: f.line)


def _region(diagnosis: Diagnosis) -> RegionFinding | None:
    """The region of the shown failing cases' wrong elements, when every one of them names the same."""
    wrong = [c for c in diagnosis.cases if c.visible and not c.passed]
    signatures = [c.signature for c in wrong]
    if not signatures or any(s is None or s.region is None for s in signatures):
        return None
    regions = {s.region for s in signatures if s is not None}
    first = signatures[0]
    if len(regions) != 1 or first is None or first.region is None:
        return None
    return RegionFinding(region=first.region, wrong=first.mismatch_count, numel=first.numel)


def _formula(applied: Activation) -> FormulaFinding:
    formula = FORMULAS[applied.name]
    params = {key: float(applied.params.get(key, default)) for key, default in formula.defaults}
    whole = Activation(applied.name, params, applied.line, applied.gated)
    return FormulaFinding(
        name=applied.name,
        params=params,
        defaults=[key for key, _ in formula.defaults if key not in applied.params],
        triton=_tidy(whole.triton("x")),
        line=applied.line,
        gated=applied.gated,
    )


def _tidy(expression: str) -> str:
    """`(x)` -> `x`: the table parenthesises its input, which for a bare name only adds noise."""
    return re.sub(r"\(x\)", "x", expression)


def _called(found: FormulaFinding) -> str:
    parts = [
        f"{key}={_value(key, value)}" + (" (PyTorch's default)" if key in found.defaults else "")
        for key, value in found.params.items()
    ]
    called = f"{found.name}({', '.join(parts)})" if parts else found.name
    return f"{called} times its input" if found.gated else called


def _value(key: str, value: float) -> str:
    if key == "approximate":  # the table holds GELU's `approximate="tanh"` as 1.0, "none" as 0.0
        return '"tanh"' if value else '"none"'
    return f"{value:g}"
