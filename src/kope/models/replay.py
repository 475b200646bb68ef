"""Record every exchange with a model as JSON lines, and replay a recording.

A recording line is `{"messages": [...], "reply": {...}}` (no keys or headers are ever written).
`ReplayModel` answers the i-th call with the i-th recorded reply; with `strict=True` it also
checks that the prompt is the recorded one, so a replay reproduces a run exactly or says where it
diverged.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from kope.models.base import Message, Model, ModelConfigError, ModelError, Reply


class Exchange(BaseModel):
    messages: list[Message]
    reply: Reply


def prompt_digest(messages: Sequence[Message]) -> str:
    text = json.dumps([m.model_dump() for m in messages], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RecordingModel:
    """Wraps a model and appends each exchange to a JSONL file."""

    def __init__(self, inner: Model, path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 4096) -> Reply:
        reply = self.inner.complete(messages, max_tokens=max_tokens)
        line = Exchange(messages=list(messages), reply=reply).model_dump_json()
        with self._lock, self.path.open("a") as handle:
            handle.write(line + "\n")
        return reply


class ReplayModel:
    """Answers with recorded replies, in order."""

    def __init__(self, path: Path, *, strict: bool = False) -> None:
        self.path = Path(path)
        self.name = f"replay:{self.path}"
        self.strict = strict
        try:
            lines = [line for line in self.path.read_text().splitlines() if line.strip()]
        except OSError as exc:
            raise ModelConfigError(f"cannot read the recording {self.path}: {exc}") from None
        try:
            self.exchanges = [Exchange.model_validate_json(line) for line in lines]
        except ValidationError as exc:
            raise ModelConfigError(f"{self.path} is not a kope recording: {exc}") from None
        self.position = 0

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 4096) -> Reply:
        if self.position >= len(self.exchanges):
            raise ModelError(f"{self.name}: the recording has only {len(self.exchanges)} replies")
        exchange = self.exchanges[self.position]
        if self.strict and prompt_digest(messages) != prompt_digest(exchange.messages):
            raise ModelError(f"{self.name}: call {self.position + 1} differs from the recorded prompt")
        self.position += 1
        return exchange.reply


class ScriptedModel:
    """Answers with the given texts in order (then repeats the last, or raises when `cycle` is False).

    A deterministic model for tests and demos; usage is counted with the offline tokenizer.
    """

    def __init__(self, replies: Sequence[str], *, name: str = "scripted", repeat_last: bool = True) -> None:
        self.replies = list(replies)
        self.name = name
        self.repeat_last = repeat_last
        self.calls: list[list[Message]] = []

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 4096) -> Reply:
        from kope.models.base import Usage
        from kope.models.tokens import count, count_messages

        index = len(self.calls)
        self.calls.append(list(messages))
        if index >= len(self.replies):
            if not self.repeat_last or not self.replies:
                raise ModelError(f"{self.name}: no reply scripted for call {index + 1}")
            index = len(self.replies) - 1
        text = self.replies[index]
        return Reply(text=text, usage=Usage(prompt=count_messages(messages), completion=count(text)), model=self.name)
