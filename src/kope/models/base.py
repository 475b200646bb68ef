"""The model protocol: messages in; text, token usage and a stop reason out.

    ModelError                 a model call failed for good
    ├── ModelConfigError       a provider's SDK is missing, or a spec is malformed
    ├── ModelAuthError         the provider refused the key
    ├── ModelNotFoundError     the provider does not know the model
    └── ModelUnavailableError  rate limits, timeouts, server errors: still failing after the retries

Token usage is what the provider reports, never an estimate. A model sees only the messages: kope's
offline recipes are not a model but a proposer of the loops (kope.agents.proposers), and `--model
offline` means "no model" (`load_model` returns None).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from kope.errors import KopeError


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
    """Tokens a call (or a whole run) spent, as the provider reports them: the one usage type of kope."""

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


@runtime_checkable
class Model(Protocol):
    name: str

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 4096) -> Reply: ...
