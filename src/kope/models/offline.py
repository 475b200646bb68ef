"""kope's offline repair model: the knowledge base's recipes, applied to the top hypotheses.

No network, no tokens. Each call proposes the next untried edit: the recipes of the ranked
hypotheses in order, each recipe's edits in the order it yields them. When nothing is left it
says so (stop reason `exhausted`) and the loop stops.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from kope.knowledge.recipes import apply
from kope.models.base import Message, RepairHints, Reply

EXHAUSTED = "exhausted"


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


class OfflineModel:
    name = "offline"

    def __init__(self, max_hypotheses: int = 5) -> None:
        self.max_hypotheses = max_hypotheses

    def proposals(self, hints: RepairHints) -> list[tuple[str, str]]:
        """(pattern id + recipe, edited source) for every edit of the top hypotheses' recipes."""
        found: list[tuple[str, str]] = []
        for hypothesis in hints.hypotheses[: self.max_hypotheses]:
            name = hypothesis.recipe
            if not name:
                continue
            for edit in apply(name, hints.source):
                found.append((f"{hypothesis.pattern} ({name})", edit))
        return found

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 4096, hints: RepairHints | None = None
    ) -> Reply:
        if hints is None:
            return Reply(text="The offline model needs a diagnosis to work from.", stop_reason=EXHAUSTED, model=self.name)
        for label, edit in self.proposals(hints):
            if source_hash(edit) not in hints.tried:
                text = f"Applying the recipe for {label}.\n\n```python\n{edit.rstrip()}\n```\n"
                return Reply(text=text, stop_reason="recipe", model=self.name)
        return Reply(
            text="No recipe of the top hypotheses proposes an edit that has not been tried.",
            stop_reason=EXHAUSTED,
            model=self.name,
        )
