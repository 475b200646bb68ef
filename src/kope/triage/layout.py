"""Match a run's candidate files to their task files, in the layouts generation pipelines write.

Known layouts (TASKS and CANDIDATES are directories; they may be the same one):

- KernelBench: `TASKS/level1/19_ReLU.py` and `CANDIDATES/[level1/]19_ReLU/sample_0.py`;
- flat KernelBench output: `CANDIDATES/level_1_problem_19_sample_0_kernel.py` (problem 19 of level 1:
  the task file `19_*.py` in `TASKS/level1/`, or anywhere in TASKS when it has no level folders);
- a task per subdirectory: `TASKS/NAME/task.py` (or `TASKS/NAME.py`) and `CANDIDATES/NAME/*.py`.

A manifest instead of a directory (CANDIDATES a `.csv` with columns `task,candidate[,id]`, or a
`.json` list of such objects): task paths relative to TASKS, candidate paths to the manifest's folder.
Every candidate file ends up either matched or listed as unmatched with the reason; none is dropped.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from kope.errors import KopeError


class LayoutError(KopeError):
    """The tasks or candidates cannot be read (missing path, unreadable manifest)."""


class Item(BaseModel):
    id: str
    """The candidate's path relative to CANDIDATES (the manifest's `id` column where given): unique."""
    problem: str
    """The task's name (its file's stem, or its subdirectory's name)."""
    task: str
    candidate: str


class Unmatched(BaseModel):
    candidate: str
    reason: str


class Matching(BaseModel):
    items: list[Item] = Field(default_factory=list)
    unmatched: list[Unmatched] = Field(default_factory=list)
    layout: str = ""


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
        self.by_name: dict[str, Path] = {}
        self.by_number: dict[tuple[int | None, int], Path] = {}
        self.levels: set[int | None] = set()
        for path in sorted(root.rglob("*.py")):
            if not _is_task(path):
                continue
            name = path.parent.name if path.name == TASK_FILE else path.stem
            self.by_name.setdefault(name, path)
            level = _level_of(path.parent if path.name != TASK_FILE else path.parent.parent)
            number = _NUMBER.match(path.stem)
            if number:
                self.by_number.setdefault((level, int(number.group(1))), path)
                self.levels.add(level)
        self.paths = set(self.by_name.values())

    def find(self, level: int | None, number: int) -> Path | None:
        found = self.by_number.get((level, number))
        if found is None and self.levels == {None}:  # tasks not sorted into level folders: any level
            found = self.by_number.get((None, number))
        return found


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
            items=[_item(candidates, c, tasks) for c in _candidate_files(candidates, index_paths)], layout="one task"
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
        matching.items.append(_item(candidates, path, task))
    matching.layout = ", ".join(sorted(layouts))
    return matching


def _candidate_files(root: Path, tasks: set[Path]) -> Iterable[Path]:
    for path in sorted(root.rglob("*.py")):
        if path.resolve() in tasks or path.name.startswith(".") or "__pycache__" in path.parts:
            continue
        yield path


def _task_for(path: Path, root: Path, index: _TaskIndex) -> tuple[Path | None, str, str]:
    flat = _FLAT.search(path.stem)
    if flat:
        level, number = int(flat.group(1)), int(flat.group(2))
        found = index.find(level, number)
        if found is not None:
            return found, "flat", ""
        return None, "", f"no task for level {level} problem {number} under the tasks folder"
    folder = path.parent
    if folder.resolve() != root.resolve():
        found = index.by_name.get(folder.name)
        if found is not None:
            return found, "per-problem folder", ""
        numbered = _NUMBER.match(folder.name)
        if numbered:
            found = index.find(_level_of(folder.parent), int(numbered.group(1)))
            if found is not None:
                return found, "per-problem folder", ""
        return None, "", f"no task named {folder.name!r} (nor {TASK_FILE} in a folder of that name)"
    found = index.by_name.get(path.stem)
    if found is not None and found.resolve() != path.resolve():
        return found, "same name", ""
    return None, "", "layout not recognised: put it in a folder named after its task, or use a manifest"


def _item(root: Path, candidate: Path, task: Path, ident: str | None = None) -> Item:
    try:
        relative = str(candidate.resolve().relative_to(root.resolve()))
    except ValueError:
        relative = str(candidate)
    return Item(id=ident or relative, problem=_name(task), task=str(task.resolve()), candidate=str(candidate.resolve()))


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
        else:
            matching.items.append(_item(manifest.parent, candidate, task, ident=row.get("id") or None))
    return matching
