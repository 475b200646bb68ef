"""The identity of a text: the one content hash the loops, the memory store and the bench manifests share."""

from __future__ import annotations

import hashlib

from kope.hashing import content_hash


def test_content_hash_is_the_identity_of_a_text() -> None:
    assert content_hash("a = 1\n") == content_hash("a = 1\n") != content_hash("a = 1\n\n")


def test_content_hash_is_the_sha256_a_manifest_records() -> None:
    assert content_hash("é") == hashlib.sha256("é".encode()).hexdigest()
