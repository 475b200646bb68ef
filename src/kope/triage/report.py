"""The triage report: one HTML page a person reads (totals, the causes of failure each once with its
count, the classes by the pipeline's own verdict where a manifest gives it, then each problem's
candidates, problems and candidates in numeric order).

Per candidate: its class before and after, its error kind or the gates' findings, the heatmap of
its wrong elements, and for a repair its diff, tokens and time. Paths in the page are relative to
the results folder, so the folder can be moved or served as it is. Every value written into the page
passes through `kope.text.sanitize` (a candidate writes its own error messages).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from kope.text import sanitize
from kope.triage.worker import TriageRow

if TYPE_CHECKING:
    from kope.triage.run import TriageSummary

_TEMPLATES = Path(__file__).with_name("templates")


def _diff_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")


def _finalize(value: object) -> object:
    return sanitize(value) if isinstance(value, str) else value


def render(summary: TriageSummary) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
    )
    environment.filters["diffclass"] = _diff_class
    grouped: dict[str, list[TriageRow]] = {}
    for row in summary.sorted_rows():
        grouped.setdefault(row.problem, []).append(row)
    saved = summary.saved
    return environment.get_template("report.html.j2").render(
        summary=summary,
        title=str(summary.out),
        problems=list(grouped.items()),
        classes=summary.classes,
        causes=summary.causes(),
        by_verdict=summary.by_source_verdict(),
        by_model=summary.by_model(),
        before=summary.counts("before"),
        after=summary.counts("after"),
        tokens_per_saved=(f"{summary.tokens / saved:.0f}" if saved else "–"),
        repair_s=sum(r.repair_s for r in summary.rows),
        written=time.strftime("%Y-%m-%d %H:%M:%S"),
    )


def write_report(summary: TriageSummary, path: Path) -> Path:
    path.write_text(render(summary))
    return path
