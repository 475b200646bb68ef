"""Near-miss suites: mutate correct kernels, keep the true near misses, write files and a manifest.

A mutant is kept only if evaluation says `fail`: it compiles, runs on every case and is wrong on at
least one (a crash, a timeout, a shape error or a pass is dropped), and says so again when evaluated
as the harness evaluates it (three trials). Mutants with the same normalised
code (an AST round trip: no comments, no formatting) are kept once, whichever operator made them.

    suite/
      manifest.json           {"kind": "kope-near-miss-suite",
                               "entries": [{id, task, candidate, label, operator, site, sha256, ...}]}
      softmax/drop-mask-3.py  the candidates, one directory per task

`task` is `op:NAME` for a built-in operator or a path relative to the manifest. `load_suite` also
reads a bare JSON list of `{file, op | task, label}` (the hand-written fixture manifests).

A candidate missing from the suite's directory is remade from its entry (operator, site, sha256) into
kope's cache (kope.bench.reproduce): the shipped default suite, `kope/corpora/suite/`, holds only its
manifest.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from kope import paths
from kope.bench.reproduce import materialise
from kope.bugs.mutation import Mutant, Mutation, mutants, normalise, operators
from kope.errors import KopeError
from kope.evaluate import EvalOptions, Evaluator
from kope.hashing import content_hash
from kope.ops import get_op, list_ops
from kope.protocol.results import EvalResult

MANIFEST = "manifest.json"
SUITE_KIND = "kope-near-miss-suite"


class SuiteError(KopeError):
    """A suite directory or manifest is missing or malformed."""


class SuiteEntry(BaseModel):
    id: str
    task: str
    """`op:NAME` for a built-in operator, else a task file's path relative to the manifest."""
    candidate: str
    """The near-miss kernel's path, relative to the manifest."""
    label: str
    """The bug-taxonomy id of the injected bug."""
    operator: str | None = None
    seed: int | None = None
    site: int | None = None
    line: int | None = None
    """1-based line of the first changed line."""
    description: str = ""
    failing_cases: list[str] = Field(default_factory=list)
    visible_fails: bool | None = None
    """Whether the case an agent is shown fails (False: only hidden cases reveal the bug)."""
    sha256: str | None = None
    """SHA-256 of the candidate's bytes: with `operator` and `site`, enough to remake a missing file."""


class OperatorStats(BaseModel):
    sites: int = 0
    duplicates: int = 0
    tried: int = 0
    kept: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    """Evaluated and dropped, by reason: pass, or error:KIND."""


class SuiteManifest(BaseModel):
    kind: Literal["kope-near-miss-suite"] = "kope-near-miss-suite"
    version: int = 1
    command: str = ""
    seed: int = 0
    generated: str = ""
    seconds: float = 0.0
    entries: list[SuiteEntry] = Field(default_factory=list)
    stats: dict[str, OperatorStats] = Field(default_factory=dict)
    """Per mutation operator, over every task."""


@dataclass(frozen=True)
class Suite:
    root: Path
    manifest: SuiteManifest
    remade: Path | None = None
    """Where candidates missing from `root` are remade from their entries (None: never)."""

    @property
    def entries(self) -> list[SuiteEntry]:
        return self.manifest.entries

    def task_path(self, entry: SuiteEntry) -> Path:
        if entry.task.startswith("op:"):
            return get_op(entry.task[3:]).task_path
        path = Path(entry.task)
        return path if path.is_absolute() else self.root / path

    def candidate_path(self, entry: SuiteEntry) -> Path:
        """The candidate's file: the suite's own, else the one remade from its entry (written on first use)."""
        path = self.stored_path(entry)
        if self.remade is None or path.is_file() or not _reproducible(entry):
            return path
        assert entry.operator is not None and entry.site is not None and entry.sha256 is not None
        return materialise(entry.task[3:], entry.operator, entry.site, entry.sha256, self.remade / entry.candidate)

    def stored_path(self, entry: SuiteEntry) -> Path:
        """Where the suite's directory keeps the candidate (it may not exist: see `candidate_path`)."""
        path = Path(entry.candidate)
        return path if path.is_absolute() else self.root / path


def _reproducible(entry: SuiteEntry) -> bool:
    relative = not Path(entry.candidate).is_absolute() and ".." not in Path(entry.candidate).parts
    known = entry.operator is not None and entry.site is not None and entry.sha256 is not None
    return relative and known and entry.task.startswith("op:")


def default_suite_dir() -> Path:
    """The shipped default suite: its manifest only (the candidates are remade on first use)."""
    return Path(str(resources.files("kope") / "corpora" / "suite"))


def load_suite(location: str | Path) -> Suite:
    """A suite from a directory holding manifest.json, a manifest file, or `default` (the shipped one)."""
    path = default_suite_dir() if str(location) == "default" else Path(location)
    manifest_path = path / MANIFEST if path.is_dir() else path
    try:
        data = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as exc:
        raise SuiteError(f"cannot read the suite manifest {manifest_path}: {exc}") from None
    try:
        if isinstance(data, list):
            manifest = SuiteManifest(entries=[_fixture_entry(item) for item in data])
        else:
            manifest = SuiteManifest.model_validate(data)
    except (ValidationError, KeyError, TypeError) as exc:
        raise SuiteError(f"{manifest_path} is not a near-miss manifest: {exc}") from None
    if isinstance(data, list):
        return Suite(root=manifest_path.parent, manifest=manifest)
    digest = hashlib.sha256(manifest_path.read_bytes()).hexdigest()[:16]
    return Suite(root=manifest_path.parent, manifest=manifest, remade=paths.cache_dir() / "suite" / digest)


def _fixture_entry(item: dict[str, object]) -> SuiteEntry:
    file = str(item["file"])
    task = f"op:{item['op']}" if "op" in item else str(item["task"])
    return SuiteEntry(
        id=Path(file).stem,
        task=task,
        candidate=file,
        label=str(item["label"]),
        description=str(item.get("description", "")),
        line=line if isinstance(line := item.get("line"), int) else None,
    )


# -- building a suite --------------------------------------------------------------------------


@dataclass
class _Group:
    """The deduplicated mutants of one operator on one kernel, in seeded order."""

    op: str
    operator: Mutation
    seed: int
    candidates: list[Mutant]
    sites: int
    duplicates: int


CorpusProgress = Callable[[str], None]


def verdict(result: EvalResult) -> str:
    """`near-miss` for a true near miss, else why not: `pass`, `reject` or `error:KIND`."""
    if result.status == "fail":
        return "near-miss"
    if result.status == "error":
        kinds = [c.error.kind for c in result.cases if c.error is not None]
        kind = result.error.kind if result.error is not None else (kinds[0] if kinds else "unknown")
        return f"error:{kind}"
    return result.status


def validation_options() -> EvalOptions:
    """One trial per case, no integrity gates (only numbers decide a near miss), short limits."""
    return EvalOptions(trials=1, timeout_s=30.0, integrity=False)


def confirmation_options() -> EvalOptions:
    """The numbers the harness will see (three trials, seed 0), no gates: a near miss must fail here too."""
    return EvalOptions(trials=3, timeout_s=30.0, integrity=False)


def plan_groups(sources: Mapping[str, str], chosen: Sequence[Mutation], seed: int) -> list[_Group]:
    """Every operator's mutants of every kernel (task name -> source), duplicates dropped, in seeded order.

    A mutant whose normalised code equals the original's or an earlier mutant's (of any operator) is a
    duplicate; the first operator, in the order given, keeps it.
    """
    groups: list[_Group] = []
    for op, source in sources.items():
        seen = {normalise(source)}
        for mutation in chosen:
            found = mutants(source, mutation)
            unique: list[Mutant] = []
            for mutant in found:
                key = normalise(mutant.source)
                if key not in seen:
                    seen.add(key)
                    unique.append(mutant)
            group_seed = _group_seed(seed, op, mutation.name)
            random.Random(group_seed).shuffle(unique)
            groups.append(_Group(op, mutation, group_seed, unique, len(found), len(found) - len(unique)))
    return groups


def _group_seed(seed: int, op: str, operator: str) -> int:
    return random.Random(f"{seed}:{op}:{operator}").randrange(2**31)


def build_suite(
    out: Path,
    *,
    ops: Sequence[str] | None = None,
    operator_names: Sequence[str] | None = None,
    seed: int = 0,
    per_operator: int = 1,
    tries: int = 4,
    min_per_label: int = 6,
    label_tries: int = 40,
    evaluator: Evaluator,
    options: EvalOptions | None = None,
    confirm: EvalOptions | None = None,
    workers: int = 2,
    command: str = "",
    progress: CorpusProgress | None = None,
) -> SuiteManifest:
    """Write a suite of near misses to `out` and return its manifest (also written there).

    Pass 1: for each (kernel, operator), evaluate its mutants in seeded order, at most `tries` of them,
    keeping up to `per_operator` near misses. Pass 2: for each taxonomy id with fewer than
    `min_per_label` near misses, evaluate the mutants pass 1 left untried, one kernel after another,
    until the id has `min_per_label` or `label_tries` more were evaluated.

    A mutant that fails the first evaluation (`options`, one trial) is evaluated again with `confirm`
    (default: three trials, as the harness evaluates) and kept only if it fails there too; one that
    does not (it reads memory it does not own, say, and passes by luck) is dropped as `unstable:...`.
    """
    began = time.monotonic()
    names = list(ops) if ops else [op.name for op in list_ops()]
    chosen = operators(operator_names)
    options = options or validation_options()
    confirm = confirm or confirmation_options()
    say = progress or (lambda message: None)
    out.mkdir(parents=True, exist_ok=True)
    _remove_previous(out)
    groups = plan_groups({name: get_op(name).kernel_path.read_text() for name in names}, chosen, seed)
    stats = {mutation.name: OperatorStats() for mutation in chosen}
    for group in groups:
        stats[group.operator.name].sites += group.sites
        stats[group.operator.name].duplicates += group.duplicates
    lock = threading.Lock()
    kept: list[tuple[int, SuiteEntry]] = []

    def attempt(index: int, mutant: Mutant) -> bool:
        group = groups[index]
        entry = _validate(group, mutant, out, evaluator, options, confirm)
        outcome = "near-miss" if isinstance(entry, SuiteEntry) else entry
        say(f"{group.op}/{mutant.operator}-{mutant.site}: {outcome}")
        with lock:
            record = stats[group.operator.name]
            record.tried += 1
            if isinstance(entry, SuiteEntry):
                record.kept += 1
                kept.append((index, entry))
            else:
                record.dropped[entry] = record.dropped.get(entry, 0) + 1
        return isinstance(entry, SuiteEntry)

    tried = [0] * len(groups)

    def first_pass(index: int) -> None:
        found = 0
        for mutant in groups[index].candidates[:tries]:
            if found >= per_operator:
                break
            tried[index] += 1
            found += attempt(index, mutant)

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="kope-mutate") as pool:
        for future in [pool.submit(first_pass, i) for i, g in enumerate(groups) if g.candidates]:
            future.result()
        for label in sorted({g.operator.label for g in groups}):
            have = sum(entry.label == label for _, entry in kept)
            queue = _round_robin(
                [(i, g.candidates[tried[i] :]) for i, g in enumerate(groups) if g.operator.label == label]
            )
            queue = queue[:label_tries]
            while have < min_per_label and queue:
                batch, queue = queue[: max(1, workers)], queue[max(1, workers) :]
                have += sum(pool.map(lambda pair: attempt(*pair), batch))
    entries = [entry for _, entry in sorted(kept, key=lambda pair: (pair[0], pair[1].site or 0))]
    manifest = SuiteManifest(
        command=command,
        seed=seed,
        generated=time.strftime("%Y-%m-%d"),
        seconds=round(time.monotonic() - began, 1),
        entries=entries,
        stats=stats,
    )
    (out / MANIFEST).write_text(manifest.model_dump_json(indent=1) + "\n")
    return manifest


def _round_robin(lists: Sequence[tuple[int, list[Mutant]]]) -> list[tuple[int, Mutant]]:
    """One mutant of each group in turn, so extra near misses of a label come from many kernels."""
    order: list[tuple[int, Mutant]] = []
    depth = max((len(items) for _, items in lists), default=0)
    for position in range(depth):
        order += [(index, items[position]) for index, items in lists if position < len(items)]
    return order


def _validate(
    group: _Group, mutant: Mutant, out: Path, evaluator: Evaluator, options: EvalOptions, confirm: EvalOptions
) -> SuiteEntry | str:
    """Write the mutant and evaluate it: its entry if it is a near miss, else why not (the file is removed)."""
    entry_id = f"{group.op}/{mutant.operator}-{mutant.site}"
    path = out / f"{entry_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(mutant.source)
    task = get_op(group.op).task_path
    result = evaluator.evaluate(task, path, options=options)
    outcome = verdict(result)
    if outcome == "near-miss":
        result = evaluator.evaluate(task, path, options=confirm)
        outcome = verdict(result)
        if outcome != "near-miss":
            outcome = f"unstable:{outcome}"
    if outcome != "near-miss":
        path.unlink(missing_ok=True)
        return outcome
    return SuiteEntry(
        id=entry_id,
        task=f"op:{group.op}",
        candidate=f"{entry_id}.py",
        label=group.operator.label,
        operator=group.operator.name,
        seed=group.seed,
        site=mutant.site,
        line=mutant.line,
        description=f"{group.operator.summary} (line {mutant.line})",
        failing_cases=[c.name for c in result.cases if not c.passed],
        visible_fails=any(not c.passed and c.visible for c in result.cases),
        sha256=content_hash(mutant.source),
    )


def _remove_previous(out: Path) -> None:
    """Delete the candidates of a suite previously written to `out` (its manifest says which)."""
    if not (out / MANIFEST).is_file():
        return
    try:
        previous = load_suite(out)
    except SuiteError:
        return
    for entry in previous.entries:
        path = previous.stored_path(entry)
        if out.resolve() in path.resolve().parents:
            path.unlink(missing_ok=True)
    for directory in sorted({previous.stored_path(e).parent for e in previous.entries}, reverse=True):
        if directory.is_dir() and directory != out and not any(directory.iterdir()):
            directory.rmdir()
    (out / MANIFEST).unlink()


def counts(entries: Sequence[SuiteEntry], key: Literal["label", "operator", "task"]) -> Counter[str]:
    return Counter(str(getattr(entry, key)) for entry in entries)
