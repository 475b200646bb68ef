"""Models behind one small protocol (`Model.complete`), loaded from a spec string.

    offline              no model: kope's recipes and searches alone (no network, no tokens); None
    openai:MODEL         OpenAI, or any OpenAI-compatible server (base_url / OPENAI_BASE_URL)
    anthropic:MODEL      Anthropic
    replay:FILE          replies recorded with --record, in order

Providers are imported only when used: a missing SDK fails with a clear message then.
"""

from __future__ import annotations

from pathlib import Path

from kope.models.base import (
    Message,
    Model,
    ModelAuthError,
    ModelConfigError,
    ModelError,
    ModelNotFoundError,
    ModelUnavailableError,
    Reply,
    Usage,
)

__all__ = [
    "OFFLINE",
    "Message",
    "Model",
    "ModelAuthError",
    "ModelConfigError",
    "ModelError",
    "ModelNotFoundError",
    "ModelUnavailableError",
    "Reply",
    "Usage",
    "load_model",
]


OFFLINE = "offline"
"""The spec of "no model": the loops then work with kope's offline proposers alone."""


def load_model(
    spec: str, *, base_url: str | None = None, record: Path | None = None, temperature: float | None = None
) -> Model | None:
    """The model a spec names, or None for `offline` (the loops' offline proposers need no model);
    `record` wraps a model so every exchange is written to a JSONL file."""
    provider, _, name = spec.partition(":")
    model: Model
    if provider == OFFLINE and not name:
        return None
    if provider == "openai" and name:
        from kope.models.openai_model import OpenAIModel

        model = OpenAIModel(name, base_url=base_url, temperature=temperature)
    elif provider == "anthropic" and name:
        from kope.models.anthropic_model import AnthropicModel

        model = AnthropicModel(name, base_url=base_url, temperature=temperature)
    elif provider == "replay" and name:
        from kope.models.replay import ReplayModel

        model = ReplayModel(Path(name))
    else:
        raise ModelConfigError(
            f"unknown model spec {spec!r}: use offline, openai:MODEL, anthropic:MODEL or replay:FILE"
        )
    if record is not None:
        from kope.models.replay import RecordingModel

        model = RecordingModel(model, record)
    return model
