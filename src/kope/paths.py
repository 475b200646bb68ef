"""Where kope keeps its files by default (each overridable from the CLI or the library)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Reference outputs and other recomputable data: `$XDG_CACHE_HOME/kope` or `~/.cache/kope`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kope"


def data_dir() -> Path:
    """Data worth keeping (the experience store): `$XDG_DATA_HOME/kope` or `~/.local/share/kope`."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kope"
