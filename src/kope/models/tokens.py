"""Count tokens offline with a real BPE tokenizer (toktok: tiktoken-identical, encodings bundled).

kope budgets prompts before sending them. Models whose tokenizer is not an OpenAI encoding are
counted with `o200k_base`; the packer keeps a safety margin for the difference.
"""

from __future__ import annotations

from collections.abc import Sequence

import toktok

from kope.models.base import Message

DEFAULT_ENCODING = "o200k_base"
PER_MESSAGE = 4
"""Tokens a chat format adds around each message (role, separators)."""
PER_REPLY = 3


def count(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    return toktok.batch_count([text], encoding)[0]


def count_many(texts: Sequence[str], encoding: str = DEFAULT_ENCODING) -> list[int]:
    return toktok.batch_count(list(texts), encoding)


def count_messages(messages: Sequence[Message], encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of a chat prompt: each message's content plus the format's overhead."""
    contents = count_many([m.content for m in messages], encoding)
    return sum(contents) + PER_MESSAGE * len(messages) + PER_REPLY
