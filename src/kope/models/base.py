"""The model protocol: messages in; text, token usage and a stop reason out.

    ModelError                 a model call failed for good
    ├── ModelConfigError       a provider's SDK is missing, or a spec is malformed
    ├── ModelAuthError         the provider refused the key
    ├── ModelNotFoundError     the provider does not know the model
    └── ModelUnavailableError  rate limits, timeouts, server errors: still failing after the retries

Token usage is what the provider reports, never an estimate. `hints` carry structured repair
context (the diagnosis, the recipes to try): LLM adapters ignore them; kope's offline recipe model
works from them alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from kope.errors import KopeError

if TYPE_CHECKING:
    from kope.knowledge.retrieval import Hypothesis


class ModelError(KopeError):
    """A model call failed for good."""


class ModelConfigError(ModelError):
    """A provider's SDK is missing, or a model spec is malformed."""


class ModelAuthError(ModelError):
    """The provider refused the credentials."""


class ModelNotFoundError(ModelError):
    """The provider does not know the model."""


class ModelUnavailableError(ModelError):
    """Rate limits, timeouts or server errors that outlasted the retries."""


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Usage(BaseModel):
    prompt: int = 0
    completion: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(prompt=self.prompt + other.prompt, completion=self.completion + other.completion)

    @property
    def total(self) -> int:
        return self.prompt + self.completion


class Reply(BaseModel):
    text: str
    usage: Usage = Usage()
    stop_reason: str | None = None
    model: str = ""


@dataclass
class RepairHints:
    """Structured context of a repair step (for models that work without text understanding)."""

    source: str
    hypotheses: list[Hypothesis] = field(default_factory=list)
    """Ranked hypotheses (their `recipe` is None where recipes are not to be used)."""
    features: dict[str, Any] = field(default_factory=dict)
    tried: set[str] = field(default_factory=set)
    """Content hashes of versions already evaluated: do not propose them again."""


@runtime_checkable
class Model(Protocol):
    name: str

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 4096, hints: RepairHints | None = None
    ) -> Reply: ...
