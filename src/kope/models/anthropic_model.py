"""Anthropic's models through the official SDK.

The key comes from `ANTHROPIC_API_KEY` (or `key_env`); `base_url` or `ANTHROPIC_BASE_URL` points at
another endpoint. System messages become the `system` parameter. Retries with backoff are the SDK's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kope.models.base import (
    Message,
    ModelAuthError,
    ModelConfigError,
    ModelError,
    ModelNotFoundError,
    ModelUnavailableError,
    Reply,
    Usage,
)
from kope.models.openai_model import _message, _status


class AnthropicModel:
    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        key_env: str = "ANTHROPIC_API_KEY",
        max_retries: int = 4,
        timeout_s: float = 300.0,
        temperature: float | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise ModelConfigError(
                "the anthropic provider needs the Anthropic SDK: pip install 'kope[anthropic]' (or pip install "
                "anthropic)"
            ) from None
        self._anthropic = anthropic
        self.name = f"anthropic:{model}"
        self.model = model
        key = os.environ.get(key_env)
        if not key:
            raise ModelAuthError(f"set {key_env} to use {self.name}")
        self.temperature = temperature
        self._client = anthropic.Anthropic(
            api_key=key,
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL"),
            max_retries=max_retries,
            timeout=timeout_s,
        )

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 4096) -> Reply:
        anthropic = self._anthropic
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        turns = [{"role": m.role, "content": m.content} for m in messages if m.role != "system"]
        extra: dict[str, Any] = {} if self.temperature is None else {"temperature": self.temperature}
        if system:
            extra["system"] = system
        try:
            response = self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=turns,  # type: ignore[arg-type]
                **extra,
            )
        except anthropic.AuthenticationError as exc:
            raise ModelAuthError(f"{self.name}: the server refused the key ({_status(exc)})") from None
        except anthropic.NotFoundError as exc:
            raise ModelNotFoundError(f"{self.name}: unknown model or endpoint ({_status(exc)})") from None
        except anthropic.BadRequestError as exc:
            raise ModelError(f"{self.name}: bad request: {_message(exc)}") from None
        except (
            anthropic.RateLimitError,
            anthropic.APITimeoutError,
            anthropic.APIConnectionError,
            anthropic.InternalServerError,
        ) as exc:
            raise ModelUnavailableError(
                f"{self.name}: still failing after retries: {type(exc).__name__}: {_message(exc)}"
            ) from None
        except anthropic.APIStatusError as exc:
            raise ModelError(f"{self.name}: {_status(exc)}: {_message(exc)}") from None
        except anthropic.APIError as exc:
            raise ModelError(f"{self.name}: malformed reply: {exc}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise ModelError(f"{self.name}: malformed reply: {type(exc).__name__}: {exc}") from None
        blocks = getattr(response, "content", None)
        if blocks is None:
            raise ModelError(f"{self.name}: the reply has no content")
        text = "".join(getattr(block, "text", "") for block in blocks if getattr(block, "type", "") == "text")
        usage = getattr(response, "usage", None)
        return Reply(
            text=text,
            usage=Usage(
                prompt=int(getattr(usage, "input_tokens", 0) or 0),
                completion=int(getattr(usage, "output_tokens", 0) or 0),
            ),
            stop_reason=getattr(response, "stop_reason", None),
            model=getattr(response, "model", self.model) or self.model,
        )
