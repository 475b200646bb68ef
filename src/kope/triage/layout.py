"""Match a run's candidate files to their task files, in the layouts generation pipelines write.

Known layouts (TASKS and CANDIDATES are directories; they may be the same one):

- KernelBench: `TASKS/level1/19_ReLU.py` and `CANDIDATES/[level1/]19_ReLU/sample_0.py`;
- flat KernelBench output: `CANDIDATES/level_1_problem_19_sample_0_kernel.py` (problem 19 of level 1:
  the task file `19_*.py` in `TASKS/level1/`, or anywhere in TASKS when it has no level folders);
- a task per subdirectory: `TASKS/NAME/task.py` (or `TASKS/NAME.py`) and `CANDIDATES/NAME/*.py`.

A manifest instead of a directory (CANDIDATES a `.csv` with columns `task,candidate[,id]`, or a
`.json` list of such objects): task paths relative to TASKS, candidate paths to the manifest's folder.
Optional columns `model` (which model wrote it) and `source_verdict` (what its own pipeline said:
pass, fail, error or unknown) are kept on the item; `module_mode` (`train` or `eval`: the mode the
candidate's own pipeline ran the models in) sets that candidate's `EvalOptions.module_mode`; other columns
are ignored.
Every candidate file ends up either matched or listed as unmatched with the reason; none is dropped.

Tasks of the same name in different folders (`KernelBench_v0/level1/19_ReLU.py` and
`v0.1/level1/19_ReLU.py`) stay two problems: a problem is named by its file's stem, lengthened by
as many parent folders as it takes to tell it from the others (`KernelBench_v0/level1/19_ReLU`).
A candidate goes to the task whose folders its own path names; where that does not decide, it is
listed as unmatched (ambiguous) rather than guessed.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, cast

from pydantic import BaseModel, Field

from kope.errors import KopeError


class LayoutError(KopeError):
    """The tasks or candidates cannot be read (missing path, unreadable manifest)."""


class Item(BaseModel):
    id: str
    """The candidate's path relative to CANDIDATES (the manifest's `id` column where given): unique."""
    problem: str
    """The task's name (its file's stem, or its subdirectory's name), with the folders that tell it from
    another task of the same name (`v0.1/level1/19_ReLU`)."""
    task: str
    candidate: str
    model: str | None = None
    """The model that wrote the candidate (a manifest's `model` column)."""
    source_verdict: str | None = None
    """What the candidate's own pipeline said of it (a manifest's `source_verdict`: pass, fail, error, unknown)."""
    module_mode: Literal["train", "eval"] | None = None
    """The mode its pipeline ran the models in (a manifest's `module_mode`); None: the run's own option."""


class Unmatched(BaseModel):
    candidate: str
    reason: str


class Matching(BaseModel):
    items: list[Item] = Field(default_factory=list)
    unmatched: list[Unmatched] = Field(default_factory=list)
    layout: str = ""


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers in names by value: 1, 2, 10, 11, 100 (not 1, 10, 100, 11, 2)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part)


_FLAT = re.compile(r"level_?(\d+)_problem_?(\d+)(?:_sample_?(\d+))?", re.IGNORECASE)
_LEVEL = re.compile(r"level_?(\d+)$", re.IGNORECASE)
_NUMBER = re.compile(r"^(\d+)_")
TASK_FILE = "task.py"


def _is_task(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    return "class Model(" in text and "def get_inputs" in text and "class ModelNew" not in text


class _TaskIndex:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.by_name: dict[str, list[Path]] = {}
        self.by_number: dict[tuple[int | None, int], list[Path]] = {}
        self.levels: set[int | None] = set()
        for path in sorted(root.rglob("*.py")):
            if not _is_task(path):
                continue
            self.by_name.setdefault(_name(path), []).append(path)
            level = _level_of(path.parent if path.name != TASK_FILE else path.parent.parent)
            number = _NUMBER.match(_name(path))
            if number:
                self.by_number.setdefault((level, int(number.group(1))), []).append(path)
                self.levels.add(level)
        self.paths = [p for paths in self.by_name.values() for p in paths]
        self.problems = problem_names(self.paths, root)

    def find(self, level: int | None, number: int) -> list[Path]:
        found = self.by_number.get((level, number), [])
        if not found and self.levels == {None}:  # tasks not sorted into level folders: any level
            found = self.by_number.get((None, number), [])
        return found


def problem_names(tasks: Iterable[Path], root: Path) -> dict[Path, str]:
    """Each task's problem name: its stem (or folder, for `task.py`), with as many parent folders
    (relative to `root`) as it takes to differ from every other task's."""
    chains: dict[Path, list[str]] = {}
    for path in tasks:
        try:
            parts = list(path.resolve().relative_to(root.resolve()).parts)
        except ValueError:
            parts = list(path.parts)
        if parts and parts[-1] == TASK_FILE:
            parts = parts[:-1]
        elif parts:
            parts[-1] = Path(parts[-1]).stem
        chains[path] = parts or [_name(path)]
    names = {path: parts[-1] for path, parts in chains.items()}
    depth = 1
    while True:
        seen: dict[str, list[Path]] = {}
        for path, name in names.items():
            seen.setdefault(name, []).append(path)
        clashes = [paths for paths in seen.values() if len(paths) > 1]
        if not clashes:
            return names
        depth += 1
        grew = False
        for paths in clashes:
            for path in paths:
                parts = chains[path]
                if len(parts) >= depth:
                    names[path] = "/".join(parts[-depth:])
                    grew = True
        if not grew:  # the same file reached twice (links): one name is right
            return names


def _level_of(folder: Path) -> int | None:
    found = _LEVEL.match(folder.name)
    return int(found.group(1)) if found else None


def _name(path: Path) -> str:
    return path.parent.name if path.name == TASK_FILE else path.stem


def match(tasks: Path, candidates: Path) -> Matching:
    """Pair every candidate under `candidates` (a directory or a manifest) with its task under `tasks`."""
    if not tasks.exists():
        raise LayoutError(f"no such tasks path: {tasks}")
    if not candidates.exists():
        raise LayoutError(f"no such candidates path: {candidates}")
    if candidates.is_file():
        return _from_manifest(tasks, candidates)
    if tasks.is_file():
        index_paths = {tasks.resolve()}
        return Matching(
            items=[_item(candidates, c, tasks, _name(tasks)) for c in _candidate_files(candidates, index_paths)],
            layout="one task",
        )
    index = _TaskIndex(tasks)
    matching = Matching()
    layouts: set[str] = set()
    for path in _candidate_files(candidates, {p.resolve() for p in index.paths}):
        task, layout, reason = _task_for(path, candidates, index)
        if task is None:
            matching.unmatched.append(Unmatched(candidate=str(path), reason=reason))
            continue
        layouts.add(layout)
        matching.items.append(_item(candidates, path, task, index.problems[task]))
    matching.items.sort(key=lambda item: (natural_key(item.problem), natural_key(item.id)))
    matching.layout = ", ".join(sorted(layouts))
    return matching


def _candidate_files(root: Path, tasks: set[Path]) -> Iterable[Path]:
    for path in sorted(root.rglob("*.py")):
        if path.resolve() in tasks or path.name.startswith(".") or "__pycache__" in path.parts:
            continue
        yield path


def _task_for(path: Path, root: Path, index: _TaskIndex) -> tuple[Path | None, str, str]:
    try:
        folders = path.resolve().parent.relative_to(root.resolve()).parts
    except ValueError:
        folders = path.parent.parts
    flat = _FLAT.search(path.stem)
    if flat:
        level, number = int(flat.group(1)), int(flat.group(2))
        found, reason = _one(index.find(level, number), folders, index)
        if found is not None:
            return found, "flat", ""
        return None, "", reason or f"no task for level {level} problem {number} under the tasks folder"
    folder = path.parent
    if folder.resolve() != root.resolve():
        found, reason = _one(index.by_name.get(folder.name, []), folders[:-1], index)
        if found is not None or reason:
            return found, "per-problem folder", reason
        numbered = _NUMBER.match(folder.name)
        if numbered:
            found, reason = _one(index.find(_level_of(folder.parent), int(numbered.group(1))), folders[:-1], index)
            if found is not None or reason:
                return found, "per-problem folder", reason
        return None, "", f"no task named {folder.name!r} (nor {TASK_FILE} in a folder of that name)"
    same = [p for p in index.by_name.get(path.stem, []) if p.resolve() != path.resolve()]
    found, reason = _one(same, folders, index)
    if found is not None or reason:
        return found, "same name", reason
    return None, "", "layout not recognised: put it in a folder named after its task, or use a manifest"


def _one(tasks: list[Path], folders: tuple[str, ...], index: _TaskIndex) -> tuple[Path | None, str]:
    """The one task of `tasks` that the candidate's folders point at; else why not (empty: no task at all)."""
    if len(tasks) <= 1:
        return (tasks[0] if tasks else None), ""
    named = set(folders)

    def score(task: Path) -> int:
        try:
            parts = task.resolve().relative_to(index.root.resolve()).parts[:-1]
        except ValueError:
            parts = task.parts[:-1]
        return sum(part in named for part in parts)

    best = max(score(t) for t in tasks)
    chosen = [t for t in tasks if score(t) == best]
    if len(chosen) == 1:
        return chosen[0], ""
    names = ", ".join(sorted((index.problems[t] for t in chosen), key=natural_key))
    return None, f"ambiguous: {len(chosen)} tasks fit ({names}); put the candidate under a folder that names one"


def _item(
    root: Path,
    candidate: Path,
    task: Path,
    problem: str,
    ident: str | None = None,
    row: dict[str, object] | None = None,
) -> Item:
    try:
        relative = str(candidate.resolve().relative_to(root.resolve()))
    except ValueError:
        relative = str(candidate)
    extra = row or {}
    return Item(
        id=ident or relative,
        problem=problem,
        task=str(task.resolve()),
        candidate=str(candidate.resolve()),
        model=_text(extra.get("model")),
        source_verdict=_verdict(extra.get("source_verdict")),
        module_mode=cast(Literal["train", "eval"] | None, _text(extra.get("module_mode"))),
    )


def _text(value: object) -> str | None:
    return str(value).strip() or None if value is not None else None


def _verdict(value: object) -> str | None:
    """A pipeline's verdict, lower-cased (pass, fail, error, unknown; other words kept as written)."""
    text = _text(value)
    return text.lower() if text else None


def _from_manifest(tasks: Path, manifest: Path) -> Matching:
    try:
        if manifest.suffix.lower() == ".csv":
            with manifest.open(newline="") as handle:
                rows = list(csv.DictReader(handle))
        elif manifest.suffix.lower() == ".json":
            data = json.loads(manifest.read_text())
            rows = data.get("candidates", []) if isinstance(data, dict) else data
        else:
            raise LayoutError(f"{manifest}: a manifest is a .csv or a .json file")
    except (OSError, ValueError, csv.Error) as exc:
        raise LayoutError(f"cannot read the manifest {manifest}: {exc}") from None
    base = tasks if tasks.is_dir() else tasks.parent
    matching = Matching(layout="manifest")
    found: list[tuple[Path, Path, dict[str, object]]] = []
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not row.get("candidate"):
            matching.unmatched.append(Unmatched(candidate=f"{manifest}:{number}", reason="row without a candidate"))
            continue
        candidate = Path(str(row["candidate"]))
        candidate = candidate if candidate.is_absolute() else manifest.parent / candidate
        if not row.get("task"):
            matching.unmatched.append(Unmatched(candidate=str(candidate), reason="the manifest names no task"))
            continue
        task = Path(str(row["task"]))
        task = task if task.is_absolute() else base / task
        if not task.is_file():
            matching.unmatched.append(Unmatched(candidate=str(candidate), reason=f"no task file {task}"))
        elif not candidate.is_file():
            matching.unmatched.append(Unmatched(candidate=str(candidate), reason="no such candidate file"))
        elif (_text(row.get("module_mode")) or "train") not in ("train", "eval"):
            reason = f"module_mode {row.get('module_mode')!r}: train or eval"
            matching.unmatched.append(Unmatched(candidate=str(candidate), reason=reason))
        else:
            found.append((candidate, task, row))
    problems = problem_names({task.resolve() for _, task, _ in found}, base)
    for candidate, task, row in found:
        ident = _text(row.get("id"))
        matching.items.append(_item(manifest.parent, candidate, task, problems[task.resolve()], ident=ident, row=row))
    return matching
