"""The identity of a text: one hash for every place kope asks "is this the same version?"."""

from __future__ import annotations

import hashlib


def content_hash(text: str) -> str:
    """The SHA-256 of `text`'s UTF-8 bytes, in hex: equal text, equal hash (what "already tried" means in every
    loop, what the memory store keys a version by, what a bench manifest records of a candidate)."""
    return hashlib.sha256(text.encode()).hexdigest()
