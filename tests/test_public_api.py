"""Each package's public face (`__all__`), the way httpx guards its own: every name listed resolves, lives in
kope (ruff's RUF022 keeps each list sorted); a name that is not public gives a clear AttributeError."""

from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = [
    "kope",
    "kope.agents",
    "kope.bench",
    "kope.bugs",
    "kope.cases",
    "kope.context",
    "kope.diagnose",
    "kope.evaluate",
    "kope.integrity",
    "kope.knowledge",
    "kope.memory",
    "kope.models",
    "kope.repair",
    "kope.source",
    "kope.triage",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_resolves_and_lives_in_kope(name: str) -> None:
    package = importlib.import_module(name)
    public = package.__all__
    assert public, f"{name} lists no public names"
    assert len(set(public)) == len(public), f"{name}.__all__ has duplicates"
    for member in public:
        value = getattr(package, member)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("kope"), (name, member, value.__module__)


@pytest.mark.parametrize(
    "name", ["kope", "kope.bench", "kope.diagnose", "kope.evaluate", "kope.knowledge", "kope.repair"]
)
def test_a_name_that_is_not_public_is_a_clear_error(name: str) -> None:
    package = importlib.import_module(name)
    with pytest.raises(AttributeError, match=f"module '{name}' has no attribute 'not_public'"):
        _ = package.not_public
