"""Remake a suite's near misses from their recipe (kernel, mutation operator, site) instead of storing them.

A near miss of a generated suite is fully determined by the correct kernel it came from, the mutation
operator and the site (kope.bugs.mutation numbers sites deterministically), so the shipped default suite
keeps only its manifest, with the SHA-256 of every candidate, and the candidates are made on first use
into kope's cache. The hash is checked on every write and every read: a kernel or an operator that
changed since the suite was built fails loudly here instead of silently measuring other bugs.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from kope.bugs.mutation import MutationError, mutate
from kope.errors import KopeError
from kope.hashing import content_hash
from kope.ops import get_op


class ReproductionError(KopeError):
    """A near miss cannot be remade from its recipe, or is not the file the manifest recorded."""


def matches(path: Path, sha256: str) -> bool:
    """Whether `path` exists and holds exactly the bytes whose hash is `sha256`."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def remake(op: str, operator: str, site: int) -> str:
    """The source of the near miss made by `operator` at `site` of built-in operator `op`'s kernel."""
    try:
        return mutate(get_op(op).kernel_path.read_text(), operator, site)
    except (KeyError, MutationError) as exc:
        raise ReproductionError(f"cannot remake {op}/{operator}-{site}: {exc}") from None


def materialise(op: str, operator: str, site: int, sha256: str, path: Path) -> Path:
    """Write the remade near miss to `path` (atomically) unless it is already there; return `path`.

    Raises ReproductionError when the remade source's hash is not `sha256`.
    """
    if matches(path, sha256):
        return path
    source = remake(op, operator, site)
    if content_hash(source) != sha256:
        raise ReproductionError(
            f"{op}/{operator}-{site} remade differs from the suite's recorded file (sha256 {sha256[:12]}...): "
            "the kernel or the mutation operator changed since the suite was built; rebuild it with "
            "`kope bench mutate`"
        )
    try:
        _write(path, source)
    except OSError as exc:
        raise ReproductionError(f"cannot write the remade near miss {path}: {exc}") from None
    return path


def _write(path: Path, source: str) -> None:
    """Write through a temporary file and a rename: concurrent writers (test workers) never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(source)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
