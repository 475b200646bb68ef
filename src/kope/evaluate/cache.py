"""Reference runs kept on disk, keyed by (task content, case, seed, trials, device).

Evaluating many candidates of one task runs its reference once per case. An entry is the whole
directory a reference job wrote (inputs, init arguments, parameters, float64 outputs, result), moved
into place atomically, so a crash never leaves half an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import uuid
from pathlib import Path

FORMAT_VERSION = 6
"""Bump when what a reference job records changes, or the inputs it makes (4: a shift keeps an input's structural
zeros; 5: a model's plain tensor state is restored before each call, kope.evaluate.inside.state; 6: whether its values
depend on a random draw, `WorkerResult.reference_random`): older entries then stop matching."""


def reference_key(task_sha: str, case_key: str, seed: int, trials: int, device: str, mode: str = "train") -> str:
    fields: dict[str, object] = {"v": FORMAT_VERSION, "task": task_sha, "case": case_key, "seed": seed}
    fields |= {"trials": trials, "device": device}
    if mode != "train":  # the keys of train-mode entries already cached stay as they were
        fields["mode"] = mode
    text = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class ReferenceCache:
    """A directory of reference entries; safe for threads and processes sharing it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)  # a second line behind the sandbox, which never shows the cache
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def get(self, key: str) -> Path | None:
        entry = self.root / key
        return entry if (entry / "result.json").is_file() else None

    def put(self, key: str, job_dir: Path) -> Path:
        """Move a finished reference job directory into the cache and return the entry."""
        entry = self.root / key
        staging = self.root / f".{key}.{uuid.uuid4().hex}"
        shutil.move(str(job_dir), str(staging))
        os.chmod(staging, 0o700)
        try:
            os.rename(staging, entry)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if self.get(key) is None:
                raise
        return entry

    def clear(self) -> int:
        removed = 0
        for child in self.root.iterdir():
            shutil.rmtree(child, ignore_errors=True)
            removed += 1
        return removed
