"""The shape of a knowledge-base pattern file (YAML).

```yaml
id: missing-mask                      # a taxonomy id (DESIGN.md) or a new one for user patterns
title: A load or store without a mask
summary: One line shown in rankings.
keywords: [mask, boundary, tail, out of bounds]
symptoms:                              # predicates over diagnosis features (kope.knowledge.features)
  - {feature: oob_loads, op: ">", value: 0, weight: 3, note: the bounds checker saw loads past a tensor}
  - {feature: tail, weight: 1.5}       # op defaults to "true"
code_cues:                             # detectors over the kernel source (kope.bugs.cue)
  - {cue: load-without-mask, weight: 2}
explanation: |
  Why the bug produces these symptoms.
fix: |
  What to change, concretely.
example:                               # runs: `kernel` fails `op`; replacing `before` by `after` passes
  op: softmax
  kernel: missing-mask.py              # under kope/corpora/examples/
  before: "x = tl.load(x_ptr + offs)"
  after: "x = tl.load(x_ptr + offs, mask=offs < n_cols, other=0.0)"
recipe: {name: add-load-mask}          # optional: a mechanical fix (kope.bugs.recipe)
edits: [masks, compare-flip]           # optional: the search's edits to favour when this pattern ranks (a bug
                                       # kind's id, kope.bugs.registry.KINDS: all its edits; or an operator's name)
```
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Op = Literal["true", "false", ">", "<", ">=", "<=", "==", "!=", "in", "between"]

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}


class Symptom(BaseModel):
    model_config = ConfigDict(extra="forbid")

    feature: str
    op: Op = "true"
    value: Any = None
    weight: float = 1.0
    note: str = ""
    """Evidence text when the symptom holds; defaults to the feature's description."""

    def holds(self, features: dict[str, Any]) -> bool:
        actual = features.get(self.feature)
        if actual is None:
            return False
        if self.op == "true":
            return bool(actual)
        if self.op == "false":
            return not actual
        if self.op == "in":
            return actual in (self.value or [])
        if self.op == "between":
            low, high = self.value
            return bool(low <= actual <= high)
        try:
            return bool(_COMPARE[self.op](actual, self.value))
        except TypeError:
            return False


class CodeCue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cue: str
    weight: float = 1.0


class Example(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: str
    """The built-in operator whose task the example kernel is evaluated against."""
    kernel: str
    """File under kope/corpora/examples/ (or beside a user pattern file): the buggy kernel."""
    before: str
    after: str


class RecipeRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str


class Pattern(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    summary: str
    keywords: list[str] = Field(default_factory=list)
    symptoms: list[Symptom] = Field(default_factory=list)
    code_cues: list[CodeCue] = Field(default_factory=list)
    explanation: str
    fix: str
    example: Example | None = None
    recipe: RecipeRef | None = None
    edits: list[str] = Field(default_factory=list)
    """Repair operators the search weighs by this pattern's score when it is a hypothesis, as it weighs those whose
    taxonomy id is the pattern's own: a bug kind's id (`masks`: all of its edits) or an operator's name
    (`compare-flip`). How a user pattern with a new id points at the built-in edits."""
    origin: str = "shipped"
    """Where the pattern comes from: shipped, a user directory, or learned (the experience store)."""

    def text(self) -> str:
        """Everything searchable, for lexical retrieval."""
        return " ".join([self.id, self.title, self.summary, " ".join(self.keywords), self.explanation, self.fix])
