"""OpenAI and every OpenAI-compatible server (vLLM, SGLang, Ollama...), through the official SDK.

The key comes from `OPENAI_API_KEY` (or the variable named by `key_env`); the base URL from the
`base_url` argument or `OPENAI_BASE_URL`. A server that needs no key (a local vLLM) gets a
placeholder. Retries with exponential backoff on rate limits, timeouts and server errors are the
SDK's (`max_retries`); what still fails becomes a `ModelError` subclass with a clear message.
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


class OpenAIModel:
    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        key_env: str = "OPENAI_API_KEY",
        max_retries: int = 4,
        timeout_s: float = 300.0,
        temperature: float | None = None,
    ) -> None:
        try:
            import openai
        except ImportError:
            raise ModelConfigError(
                "the openai provider needs the OpenAI SDK: pip install 'kope[openai]' (or pip install openai)"
            ) from None
        self._openai = openai
        self.name = f"openai:{model}"
        self.model = model
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        key = os.environ.get(key_env)
        if not key and base_url is None:
            raise ModelAuthError(f"set {key_env} to use {self.name} (or give a base URL for a local server)")
        self.temperature = temperature
        self._client = openai.OpenAI(
            api_key=key or "not-needed", base_url=base_url, max_retries=max_retries, timeout=timeout_s
        )

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 4096) -> Reply:
        openai = self._openai
        extra: dict[str, Any] = {} if self.temperature is None else {"temperature": self.temperature}
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": m.role, "content": m.content} for m in messages],  # type: ignore[misc]
                max_tokens=max_tokens,
                **extra,
            )
        except openai.AuthenticationError as exc:
            raise ModelAuthError(f"{self.name}: the server refused the key ({_status(exc)})") from None
        except openai.NotFoundError as exc:
            raise ModelNotFoundError(f"{self.name}: unknown model or endpoint ({_status(exc)})") from None
        except openai.BadRequestError as exc:
            raise ModelError(f"{self.name}: bad request: {_message(exc)}") from None
        except (
            openai.RateLimitError,
            openai.APITimeoutError,
            openai.APIConnectionError,
            openai.InternalServerError,
        ) as exc:
            raise ModelUnavailableError(
                f"{self.name}: still failing after retries: {type(exc).__name__}: {_message(exc)}"
            ) from None
        except openai.APIStatusError as exc:
            raise ModelError(f"{self.name}: {_status(exc)}: {_message(exc)}") from None
        except openai.APIError as exc:
            raise ModelError(f"{self.name}: malformed reply: {exc}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise ModelError(f"{self.name}: malformed reply: {type(exc).__name__}: {exc}") from None
        choices = getattr(response, "choices", None)
        if not choices or choices[0].message is None:
            raise ModelError(f"{self.name}: the reply has no message")
        usage = getattr(response, "usage", None)
        return Reply(
            text=choices[0].message.content or "",
            usage=Usage(
                prompt=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion=int(getattr(usage, "completion_tokens", 0) or 0),
            ),
            stop_reason=choices[0].finish_reason,
            model=getattr(response, "model", self.model) or self.model,
        )


def _status(exc: Any) -> str:
    code = getattr(exc, "status_code", None)
    return f"HTTP {code}" if code else type(exc).__name__


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])
    return str(getattr(exc, "message", exc))
