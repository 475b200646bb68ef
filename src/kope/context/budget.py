"""Fit a prompt into a token budget, exactly.

A prompt is built from sections. Each section offers its text at one or more levels of detail,
richest first (a level may be empty: the section can be left out). Required sections must fit at
their poorest level or packing fails. Optional sections are filled in priority order at the richest
level that still fits; when one does not fit at any level it is skipped and packing goes on (it
does not stop at the first miss). The assembled prompt is then counted as a whole with the real
tokenizer, and while it exceeds the budget the lowest-priority optional section is dropped. The
budget is therefore never exceeded, and every choice is recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kope.errors import KopeError


class BudgetError(KopeError):
    """The required parts of a prompt do not fit the token budget."""


@dataclass(frozen=True)
class Section:
    name: str
    title: str
    levels: tuple[str, ...]
    """Texts from richest to poorest; an empty text leaves the section out."""
    priority: float = 0.0
    """Higher is packed first."""
    required: bool = False


@dataclass
class Choice:
    name: str
    level: int | None
    """Index into the section's levels, or None when it was dropped."""
    tokens: int


@dataclass
class Packed:
    sections: list[tuple[Section, str]]
    """The included sections, in their original order, with the chosen text."""
    tokens: int
    budget: int
    choices: list[Choice] = field(default_factory=list)

    @property
    def dropped(self) -> list[str]:
        return [c.name for c in self.choices if c.level is None]

    @property
    def reduced(self) -> list[str]:
        return [c.name for c in self.choices if c.level]


def pack(
    sections: Sequence[Section],
    budget: int,
    count: Callable[[Sequence[tuple[Section, str]]], int],
    *,
    breadth_first: bool = False,
) -> Packed:
    """Choose a level for each section so that `count(assembled) <= budget`.

    `count` receives the included sections in order and returns the exact token count of the prompt
    they assemble into (fixed parts included). `breadth_first`: first include every optional section
    that fits at its poorest level (priority order), then enrich them in priority order — more
    sections kept, each shorter, where the default fills the first sections at full detail.
    """
    order = {section.name: index for index, section in enumerate(sections)}
    chosen: dict[str, tuple[Section, int]] = {}

    def assembled(extra: tuple[Section, int] | None = None) -> list[tuple[Section, str]]:
        items = dict(chosen)
        if extra is not None:
            items[extra[0].name] = extra
        ordered = sorted(items.values(), key=lambda item: order[item[0].name])
        return [(section, section.levels[level]) for section, level in ordered if section.levels[level]]

    for section in sections:
        if section.required:
            chosen[section.name] = (section, len(section.levels) - 1)
    if count(assembled()) > budget:
        raise BudgetError(
            f"the required parts of the prompt need {count(assembled())} tokens, over the budget of {budget}"
        )
    if breadth_first:
        _breadth_first(sections, budget, count, chosen, assembled)
    else:
        for section in sorted(sections, key=lambda s: -s.priority):
            for level in range(len(section.levels)):
                if not section.levels[level] and not section.required:
                    break
                if count(assembled((section, level))) <= budget:
                    chosen[section.name] = (section, level)
                    break
    included = assembled()
    while count(included) > budget:
        optional = [s for s, _ in chosen.values() if not s.required]
        if not optional:
            raise BudgetError("the prompt does not fit the budget")
        weakest = min(optional, key=lambda s: s.priority)
        del chosen[weakest.name]
        included = assembled()
    choices = [
        Choice(
            name=section.name,
            level=chosen[section.name][1] if section.name in chosen else None,
            tokens=count([(section, section.levels[chosen[section.name][1]])]) if section.name in chosen else 0,
        )
        for section in sections
    ]
    return Packed(sections=included, tokens=count(included), budget=budget, choices=choices)


def _breadth_first(
    sections: Sequence[Section],
    budget: int,
    count: Callable[[Sequence[tuple[Section, str]]], int],
    chosen: dict[str, tuple[Section, int]],
    assembled: Callable[[tuple[Section, int] | None], list[tuple[Section, str]]],
) -> None:
    optional = sorted((s for s in sections if not s.required), key=lambda s: -s.priority)
    for section in optional:
        poorest = max((i for i, text in enumerate(section.levels) if text), default=None)
        if poorest is not None and count(assembled((section, poorest))) <= budget:
            chosen[section.name] = (section, poorest)
    for section in optional:
        if section.name not in chosen:
            continue
        for level in range(chosen[section.name][1]):
            if count(assembled((section, level))) <= budget:
                chosen[section.name] = (section, level)
                break
