"""The knowledge base: bug patterns shipped with kope, plus the user's own.

Shipped patterns live in `kope/knowledge/patterns/*.yaml`. Users add theirs with `kope kb add FILE`
(copied into the user pattern directory, `~/.local/share/kope/patterns` by default) or by pointing
`KnowledgeBase(extra_dirs=[...])` at a directory. A user pattern with the id of a shipped one
replaces it. Lexical search uses SQLite FTS5's BM25 over each pattern's text.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from kope import paths
from kope.errors import KopeError
from kope.knowledge.schema import Pattern


class KnowledgeError(KopeError):
    """A pattern file is malformed or refers to unknown features, cues or recipes."""


def shipped_dir() -> Path:
    return Path(str(resources.files("kope.knowledge") / "patterns"))


def examples_dir() -> Path:
    return Path(str(resources.files("kope") / "corpora" / "examples"))


def user_dir() -> Path:
    return paths.data_dir() / "patterns"


def load_pattern_file(path: Path, origin: str) -> Pattern:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise KnowledgeError(f"{path}: cannot read YAML: {exc}") from None
    if not isinstance(data, dict):
        raise KnowledgeError(f"{path}: a pattern file holds one mapping (id, title, symptoms...)")
    data.setdefault("origin", origin)
    try:
        return Pattern.model_validate(data)
    except ValidationError as exc:
        raise KnowledgeError(f"{path}: {exc}") from None


class KnowledgeBase:
    """Patterns by id, searchable; load once and reuse."""

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        self.patterns: dict[str, Pattern] = {}
        for pattern in patterns:
            self.patterns[pattern.id] = pattern
        self._index: sqlite3.Connection | None = None
        self._ids: list[str] = []

    @classmethod
    def load(cls, extra_dirs: Sequence[Path] = (), *, include_user: bool = True) -> KnowledgeBase:
        patterns = [load_pattern_file(p, "shipped") for p in sorted(shipped_dir().glob("*.yaml"))]
        dirs = [*([user_dir()] if include_user else []), *extra_dirs]
        for directory in dirs:
            if directory.is_dir():
                patterns += [load_pattern_file(p, str(directory)) for p in sorted(directory.glob("*.yaml"))]
        return cls(patterns)

    def extend(self, patterns: Iterable[Pattern]) -> KnowledgeBase:
        """Add patterns (e.g. learned ones from the experience store); existing ids are kept. Returns self."""
        for pattern in patterns:
            self.patterns.setdefault(pattern.id, pattern)
        if self._index is not None:
            self._index.close()
            self._index = None
        return self

    def __len__(self) -> int:
        return len(self.patterns)

    def get(self, pattern_id: str) -> Pattern:
        try:
            return self.patterns[pattern_id]
        except KeyError:
            raise KnowledgeError(f"no pattern {pattern_id!r}; `kope kb list` shows them") from None

    def search(self, text: str, limit: int = 10) -> list[tuple[Pattern, float]]:
        """Patterns ranked by BM25 against `text` (higher is better)."""
        terms = [t for t in re.findall(r"[A-Za-z0-9_]+", text.lower()) if len(t) > 1]
        if not terms or not self.patterns:
            return []
        index = self._fts()
        query = " OR ".join(f'"{term}"' for term in terms)
        rows = index.execute(
            "SELECT rowid, bm25(patterns) FROM patterns WHERE patterns MATCH ? ORDER BY bm25(patterns) LIMIT ?",
            (query, limit),
        ).fetchall()
        return [(self.patterns[self._ids[rowid - 1]], -float(score)) for rowid, score in rows]

    def _fts(self) -> sqlite3.Connection:
        if self._index is None:
            index = sqlite3.connect(":memory:", check_same_thread=False)
            index.execute("CREATE VIRTUAL TABLE patterns USING fts5(body, tokenize='porter unicode61')")
            self._ids = list(self.patterns)
            index.executemany(
                "INSERT INTO patterns(rowid, body) VALUES (?, ?)",
                [(i + 1, self.patterns[pid].text().replace("-", " ")) for i, pid in enumerate(self._ids)],
            )
            self._index = index
        return self._index

    def validate(self) -> list[str]:
        """Problems with the loaded patterns: unknown features, cues or recipes, examples that are missing."""
        from kope.bugs.cue import CUES
        from kope.bugs.edit import OPERATORS
        from kope.bugs.recipe import RECIPES
        from kope.bugs.registry import KIND_IDS
        from kope.knowledge.features import FEATURES
        from kope.ops import UnknownOpError, get_op

        problems: list[str] = []
        for pattern in self.patterns.values():
            where = f"{pattern.id} ({pattern.origin})"
            for symptom in pattern.symptoms:
                if symptom.feature not in FEATURES:
                    problems.append(f"{where}: unknown feature {symptom.feature!r}")
            for code_cue in pattern.code_cues:
                if code_cue.cue not in CUES:
                    problems.append(f"{where}: unknown code cue {code_cue.cue!r}")
            if pattern.recipe is not None and pattern.recipe.name not in RECIPES:
                problems.append(f"{where}: unknown recipe {pattern.recipe.name!r}")
            for name in pattern.edits:
                if name not in KIND_IDS and name not in OPERATORS:
                    problems.append(f"{where}: unknown edits {name!r} (neither a bug kind nor a repair operator)")
            if not pattern.symptoms and not pattern.code_cues:
                problems.append(f"{where}: no symptoms and no code cues: retrieval can only find it by text")
            example = pattern.example
            if example is not None:
                try:
                    get_op(example.op)
                except UnknownOpError:
                    problems.append(f"{where}: example op {example.op!r} is not a built-in operator")
                kernel = example_path(pattern)
                if kernel is None or not kernel.is_file():
                    problems.append(f"{where}: example kernel {example.kernel!r} not found")
                elif example.before not in kernel.read_text():
                    problems.append(f"{where}: the example's `before` text is not in {example.kernel}")
        return problems


def example_path(pattern: Pattern) -> Path | None:
    if pattern.example is None:
        return None
    if pattern.origin == "shipped":
        return examples_dir() / pattern.example.kernel
    return Path(pattern.origin) / pattern.example.kernel
