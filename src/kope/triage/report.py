"""The triage report: one HTML page a person reads (totals, then each problem's candidates).

Per candidate: its class before and after, its error kind or the gates' findings, the heatmap of
its wrong elements, and for a repair its diff, tokens and time. Paths in the page are relative to
the results folder, so the folder can be moved or served as it is.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from kope.triage.worker import CLASSES, TriageRow

if TYPE_CHECKING:
    from kope.triage.run import TriageSummary

_TEMPLATES = Path(__file__).with_name("templates")


def _diff_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")


def render(summary: TriageSummary) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )
    environment.filters["diffclass"] = _diff_class
    grouped: dict[str, list[TriageRow]] = defaultdict(list)
    for row in sorted(summary.rows, key=lambda r: (r.problem, r.id)):
        grouped[row.problem].append(row)
    saved = summary.saved
    classes = (*CLASSES, "error")
    return environment.get_template("report.html.j2").render(
        summary=summary,
        title=str(summary.out),
        problems=sorted(grouped.items()),
        classes=classes,
        before=summary.counts("before"),
        after=summary.counts("after"),
        tokens_per_saved=(f"{summary.tokens / saved:.0f}" if saved else "–"),
        repair_s=sum(r.repair_s for r in summary.rows),
        written=time.strftime("%Y-%m-%d %H:%M:%S"),
    )


def write_report(summary: TriageSummary, path: Path) -> Path:
    path.write_text(render(summary))
    return path
