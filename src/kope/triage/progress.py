"""The progress of `kope triage`: on a terminal a bar (candidates done, counts per class, an ETA); in a
log (stderr not a terminal) one line per candidate as it finishes:

    [3/140] level1/19_ReLU/sample_2.py: broken (runtime) 4.1 s
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kope.text import sanitize
from kope.triage.worker import CLASSES, TriageRow

_COLOURS = {
    "pass": "green",
    "near-miss": "yellow",
    "broken": "red",
    "cheat": "magenta",
    "unsupported-here": "cyan",
    "error": "white",
}


def describe(counts: dict[str, int], saved: int) -> str:
    parts = [
        f"[{_COLOURS.get(name, 'cyan')}]{name} {counts.get(name, 0)}[/]"
        for name in (*CLASSES, "error")
        if counts.get(name, 0) or name != "error"
    ]
    return " · ".join(parts) + f" · saved {saved}"


def line(row: TriageRow, done: int, total: int) -> str:
    """One candidate's line: its id, class (and class after repair), why, and its time."""
    klass = row.before if row.after == row.before else f"{row.before} → {row.after}"
    why = row.error_kind or ("kope failed" if row.error else ", ".join(row.findings))
    return sanitize(f"[{done}/{total}] {row.id}: {klass}{f' ({why})' if why else ''} {row.job_s:.1f} s")


class TriageProgress:
    def __init__(self, total: int, done: int = 0, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.total, self.done = total, done
        self.bar = self.console.is_terminal
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            disable=not self.bar,
        )
        self.task = self.progress.add_task(describe({}, 0), total=total, completed=done)

    def __enter__(self) -> TriageProgress:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.progress.stop()

    def update(self, row: TriageRow, counts: dict[str, int], saved: int) -> None:
        self.done += 1
        self.progress.update(self.task, advance=1, description=describe(counts, saved))
        if not self.bar:
            self.console.print(line(row, self.done, self.total), markup=False, highlight=False, soft_wrap=True)
