"""The progress bar of `kope triage`: candidates done, counts per class (before → after), an ETA."""

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
        f"[{_COLOURS[name]}]{name} {counts.get(name, 0)}[/]"
        for name in (*CLASSES, "error")
        if counts.get(name, 0) or name != "error"
    ]
    return " · ".join(parts) + f" · saved {saved}"


class TriageProgress:
    def __init__(self, total: int, done: int = 0, console: Console | None = None) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
            transient=False,
        )
        self.task = self.progress.add_task(describe({}, 0), total=total, completed=done)

    def __enter__(self) -> TriageProgress:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.progress.stop()

    def update(self, row: TriageRow, counts: dict[str, int], saved: int) -> None:
        self.progress.update(self.task, advance=1, description=describe(counts, saved))
