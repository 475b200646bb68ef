"""Models behind one small protocol (`Model.complete`), loaded from a spec string.

    offline              kope's recipe engine: no network, no tokens
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
    RepairHints,
    Reply,
    Usage,
)

__all__ = [
    "Message",
    "Model",
    "ModelAuthError",
    "ModelConfigError",
    "ModelError",
    "ModelNotFoundError",
    "ModelUnavailableError",
    "RepairHints",
    "Reply",
    "Usage",
    "load_model",
]


def load_model(
    spec: str, *, base_url: str | None = None, record: Path | None = None, temperature: float | None = None
) -> Model:
    """The model a spec names; `record` wraps it so every exchange is written to a JSONL file."""
    provider, _, name = spec.partition(":")
    model: Model
    if provider == "offline" and not name:
        from kope.models.offline import OfflineModel

        model = OfflineModel()
    elif provider == "openai" and name:
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
