from __future__ import annotations

import pytest

from kope.agents.prompts import StepContext, build
from kope.context.budget import BudgetError, Section, pack
from kope.models.tokens import count, count_messages


def counter(included):  # type: ignore[no-untyped-def]
    return sum(count(text) for _, text in included) + 10


def test_fits_exactly_and_prefers_priority() -> None:
    sections = [
        Section("kernel", "k", ("kernel " * 50,), priority=100, required=True),
        Section("history", "h", ("history " * 300, "history " * 30, ""), priority=10),
        Section("hints", "x", ("hint " * 200, "hint " * 20, ""), priority=50),
    ]
    for budget in (70, 100, 200, 400, 2000):
        packed = pack(sections, budget, counter)
        assert packed.tokens <= budget
        assert packed.tokens == counter(packed.sections)
    tight = pack(sections, 100, counter)
    assert "history" in tight.dropped and tight.sections[0][0].name == "kernel"
    roomy = pack(sections, 2000, counter)
    assert roomy.dropped == [] and roomy.reduced == []


def test_skips_a_section_that_does_not_fit_and_goes_on() -> None:
    sections = [
        Section("kernel", "k", ("k " * 20,), priority=100, required=True),
        Section("huge", "h", ("huge " * 1000,), priority=90),
        Section("small", "s", ("small " * 5,), priority=10),
    ]
    packed = pack(sections, 80, counter)
    assert packed.dropped == ["huge"] and {s.name for s, _ in packed.sections} == {"kernel", "small"}


def test_required_parts_over_budget_fail() -> None:
    with pytest.raises(BudgetError, match="required"):
        pack([Section("kernel", "k", ("k " * 500,), required=True)], 50, counter)


def test_prompt_never_exceeds_the_budget() -> None:
    context = StepContext(
        reference="ref = 1\n" * 40, kernel="x = 1\n" * 60, history=[f"attempt {i}" * 30 for i in range(10)]
    )
    sizes = []
    for budget in (1000, 1100, 1500, 5000):
        messages, packed = build(context, budget)
        assert count_messages(messages) == packed.tokens <= budget
        sizes.append(packed.tokens)
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1], "more budget, more history"
    with pytest.raises(BudgetError):
        build(context, 500)


@pytest.mark.slow
def test_breadth_first_keeps_more_sections_within_the_budget() -> None:
    sections = [Section("kernel", "k", ("kernel " * 20,), priority=100, required=True)] + [
        Section(f"item{i}", "e", (f"item{i} detail " * 60, f"item{i} line", ""), priority=50 - i) for i in range(8)
    ]
    for budget in (40, 80, 150, 400, 2000):
        deep = pack(sections, budget, counter)
        wide = pack(sections, budget, counter, breadth_first=True)
        for packed in (deep, wide):
            assert packed.tokens <= budget and packed.tokens == counter(packed.sections)
        assert len(wide.sections) >= len(deep.sections)
    kept = [
        (len(pack(sections, b, counter).sections), len(pack(sections, b, counter, breadth_first=True).sections))
        for b in range(40, 600, 10)
    ]
    assert any(wide > deep for deep, wide in kept), "somewhere the default drops sections the wide packing keeps"
    wide = pack(sections, 400, counter, breadth_first=True)
    assert len(wide.sections) == 9 and wide.choices[1].level == 0 and wide.choices[2].level == 1, "best enriched"
