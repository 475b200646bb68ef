"""Proposers: what decides a loop's next version, behind one small protocol.

    RecipeProposer   the knowledge base's recipes of the top hypotheses (debug; no model, no tokens)
    ModelProposer    a model's reply to the loop's prompt: an edit, an instrumentation request, or nothing
    LaunchSearch     the next launch configuration of the kernel's knobs (optimize; kope.agents.launch)

A loop asks its proposers in order, each with a view of where it stands (`RepairView` for the debug
loop, `Frontier` for the optimize loop), and takes the first proposal; None means "nothing more from
here". A model sees only messages: that is why the offline recipes are a proposer and not a model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kope.agents.edits import EditError, Request, parse_reply
from kope.agents.launch import Knob, apply_config, current_config, describe, scan
from kope.bugs.recipe import apply
from kope.hashing import content_hash
from kope.models.base import Message, Model, ModelError, Usage

if TYPE_CHECKING:
    from kope.diagnose.report import Diagnosis


@dataclass
class Proposal:
    """One decision of a loop: a new version (`source`), or why there is none (`kind`, `note`)."""

    kind: str
    """edit, launch-config, instrumentation; no version: no-edit, edit-failed, model-error"""
    source: str | None = None
    text: str = ""
    """What was proposed, in words: the reply (model), the recipe applied, the configuration tried."""
    params: dict[str, Any] | None = None
    usage: Usage = field(default_factory=Usage)
    note: str = ""
    requests: list[Request] = field(default_factory=list)
    """Instrumentation requests (kind `instrumentation`)."""
    stop_reason: str | None = None
    """The model's stop reason (`recipe` for a recipe), for the transcript."""
    by: str = ""
    """The proposer's name."""


ViewT = TypeVar("ViewT", contravariant=True)


class Proposer(Protocol[ViewT]):
    name: str

    def propose(self, view: ViewT) -> Proposal | None:
        """The next decision from `view`, or None when this proposer has nothing more to try from there."""


class Conversation(Protocol):
    """A view a model can answer: the current source and the prompt about it."""

    @property
    def source(self) -> str: ...

    def messages(self) -> list[Message]: ...


@dataclass
class RepairView:
    """Where the debug loop stands: the current version, its diagnosis, the prompt, what was tried."""

    source: str
    prompt: list[Message]
    diagnosis: Diagnosis | None
    """None when the diagnosis is kept out (the `diagnosis` ablation): no hypotheses, no recipes."""
    recipes: bool = True
    """False: the knowledge base's recipes are off (the `recipes` ablation)."""
    tried: set[str] = field(default_factory=set)
    """Content hashes of the versions already evaluated."""

    def messages(self) -> list[Message]:
        return self.prompt


class Opened(Protocol):
    """An open version of the optimize search (kope.agents.optimize keeps them): what a proposer reads."""

    source: str
    config: dict[str, int] | None
    children: int

    @property
    def node(self) -> Any: ...


class Searching(Protocol):
    """The optimize search so far, as a proposer sees it."""

    @property
    def start(self) -> Opened: ...


@dataclass
class Frontier:
    """Where the optimize loop stands: the open version it extends, the search so far, its prompt on demand."""

    current: Opened
    search: Searching
    prompt: Callable[[], list[Message]] = list

    @property
    def source(self) -> str:
        return self.current.source

    def messages(self) -> list[Message]:
        return self.prompt()


class RecipeProposer:
    """The next untried edit of the top hypotheses' recipes, in rank order (kope's offline repair step)."""

    name = "offline"

    def __init__(self, max_hypotheses: int = 5) -> None:
        self.max_hypotheses = max_hypotheses

    def proposals(self, view: RepairView) -> list[tuple[str, str]]:
        """(pattern id and recipe, edited source) for every edit of the top hypotheses' recipes."""
        if view.diagnosis is None or not view.recipes:
            return []
        found: list[tuple[str, str]] = []
        for hypothesis in view.diagnosis.hypotheses[: self.max_hypotheses]:
            if hypothesis.recipe:
                found += [
                    (f"{hypothesis.pattern} ({hypothesis.recipe})", edit)
                    for edit in apply(hypothesis.recipe, view.source)
                ]
        return found

    def propose(self, view: RepairView) -> Proposal | None:
        for label, edit in self.proposals(view):
            if content_hash(edit) not in view.tried:
                text = f"Applying the recipe for {label}.\n\n```python\n{edit.rstrip()}\n```\n"
                return Proposal(kind="edit", source=edit, text=text, stop_reason="recipe", by=self.name)
        return None


class ModelProposer:
    """A model's answer to the loop's prompt, parsed: an edit applied to the source, or why there is none."""

    def __init__(self, model: Model, *, max_tokens: int = 4096, instrumentation: bool = True) -> None:
        self.model = model
        self.name = model.name
        self.max_tokens = max_tokens
        self.instrumentation = instrumentation
        """Take instrumentation requests (the debug loop answers them; the optimize loop does not)."""

    def propose(self, view: Conversation) -> Proposal:
        try:
            reply = self.model.complete(view.messages(), max_tokens=self.max_tokens)
        except ModelError as exc:
            return Proposal(kind="model-error", note=str(exc), by=self.name)
        made = Proposal(
            kind="no-edit",
            text=reply.text,
            usage=reply.usage,
            stop_reason=reply.stop_reason,
            by=self.name,
            note="the reply had no edit",
        )
        parsed = parse_reply(reply.text)
        if parsed.requests and not parsed.has_edit and self.instrumentation:
            made.kind, made.requests, made.note = "instrumentation", list(parsed.requests), ""
        elif parsed.has_edit:
            try:
                made.source, made.kind, made.note = parsed.apply(view.source), "edit", ""
            except EditError as exc:
                made.kind, made.note = "edit-failed", str(exc)
        return made


class LaunchSearch:
    """Coordinate moves over the launch knobs (kope.agents.launch), seeded and ordered by the memory."""

    name = "offline"

    def __init__(
        self,
        start_source: str,
        *,
        interpreted: bool,
        seeds: Sequence[dict[str, int]] = (),
        move_order: dict[tuple[str, str], float] | None = None,
    ) -> None:
        found = scan(start_source)
        knobs = found.knobs
        self.notes = found.notes
        """Why launch parameters the file has are not searched (autotune's own), said once as a no-edit step."""
        if interpreted:
            knobs = [k for k in knobs if k.id not in ("kw:num_warps", "kw:num_stages")]
        self.knobs: list[Knob] = knobs
        self.start = current_config(knobs)
        self.seeds = [self._fit(seed) for seed in seeds]
        self.move_order = dict(move_order or {})
        self.tried: set[tuple[tuple[str, int], ...]] = {self._key(self.start)}

    @staticmethod
    def _key(config: dict[str, int]) -> tuple[tuple[str, int], ...]:
        return tuple(sorted(config.items()))

    def _fit(self, seed: dict[str, int]) -> dict[str, int]:
        config = dict(self.start)
        for knob in self.knobs:
            if knob.id in seed:
                config[knob.id] = min(knob.choices, key=lambda c: abs(math.log2(c) - math.log2(max(seed[knob.id], 1))))
        return config

    def moves(self, config: dict[str, int]) -> list[dict[str, int]]:
        """One-knob moves from `config`, the memory's best-scored first (then block sizes up, then down)."""
        ranked: list[tuple[float, int, dict[str, int]]] = []
        for position, knob in enumerate(self.knobs):
            for value in knob.neighbours(config.get(knob.id, knob.current)):
                direction = "up" if value > config.get(knob.id, knob.current) else "down"
                prior = (0.002 if direction == "up" else 0.0) - 0.0001 * position
                score = self.move_order.get((knob.id, direction), 0.0) + prior
                ranked.append((score, len(ranked), {**config, knob.id: value}))
        ranked.sort(key=lambda item: (-item[0], item[1]))
        return [config for _, _, config in ranked]

    def propose(self, view: Frontier) -> Proposal | None:
        if not self.knobs and self.notes:
            note, self.notes = "; ".join(self.notes), []
            return Proposal(kind="no-edit", note=f"no launch parameter to search: {note}", by=self.name)
        current, at_start = view.current, view.current is view.search.start
        base = current.config if current.config is not None else self.start
        for config in (self.seeds if at_start else []) + self.moves(base):
            key = self._key(config)
            if key in self.tried:
                continue
            self.tried.add(key)
            seeded = at_start and any(self._key(seed) == key for seed in self.seeds)
            changes = {k: (base[k], v) for k, v in config.items() if base.get(k) != v}
            source = apply_config(current.source, {k: v for k, v in config.items() if k in changes})
            what = describe(changes) + (" (the fastest configuration found for a similar task)" if seeded else "")
            return Proposal(
                kind="launch-config",
                source=source,
                text=f"launch parameters {what}",
                by=self.name,
                params={"config": config, "changes": {k: list(v) for k, v in changes.items()}, "seed": seeded},
            )
        return None
