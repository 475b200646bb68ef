"""Export the experience graph: JSON (everything), Graphviz DOT, and a self-contained HTML page.

The HTML page draws, for each run, the tree of versions (`derived_from`) as SVG: one circle per
version coloured by its outcome in that run, its time and speed relative to the start, dashed
links between alternatives, thick green `fixed_by` links, and for each version the evidence that
was injected into the prompt that produced it (`used_evidence`), linked to the version that
evidence came from. Below the trees, every version's decision, diff and evaluations. No scripts,
no external files: it opens from disk in any browser.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from typing import Any, Literal

from pydantic import BaseModel, Field

from kope.memory.records import (
    DecisionRecord,
    EdgeRecord,
    EvaluationRecord,
    LearnedRecord,
    RunRecord,
    TaskRecord,
    VersionRecord,
)
from kope.memory.store import ExperienceStore

Format = Literal["json", "dot", "html"]
COLOURS = {"pass": "#2e9d4f", "fail": "#e08a1e", "error": "#d43d3d", "reject": "#a23bbf", "": "#8a8a8a"}


class Graph(BaseModel):
    store: str
    tasks: list[TaskRecord] = Field(default_factory=list)
    runs: list[RunRecord] = Field(default_factory=list)
    versions: list[VersionRecord] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    evaluations: list[EvaluationRecord] = Field(default_factory=list)
    edges: list[EdgeRecord] = Field(default_factory=list)
    learned: list[LearnedRecord] = Field(default_factory=list)
    pattern_stats: list[dict[str, Any]] = Field(default_factory=list)


def collect(store: ExperienceStore, *, run_id: int | None = None, task_id: int | None = None) -> Graph:
    """The graph of one run, one task's runs, or the whole store."""
    runs = store.runs(task_id=task_id)
    if run_id is not None:
        runs = [r for r in runs if r.id == run_id]
    run_ids = {r.id for r in runs}
    decisions = [d for d in store.decisions() if d.run_id in run_ids]
    evaluations = [e for e in store.evaluations() if e.run_id in run_ids]
    edges = [e for e in store.edges() if e.run_id in run_ids]
    wanted = {d.child_id for d in decisions} | {d.parent_id for d in decisions if d.parent_id is not None}
    wanted |= {e.version_id for e in evaluations} | {e.src for e in edges}
    wanted |= {e.dst for e in edges if e.dst is not None}
    wanted |= {r.start_version for r in runs if r.start_version} | {r.best_version for r in runs if r.best_version}
    versions = store.versions(ids=sorted(wanted)) if wanted else []
    task_ids = {r.task_id for r in runs} | {v.task_id for v in versions}
    stats = sorted(store.pattern_stats().values(), key=lambda s: (-s.fixed, -s.applied, s.pattern))
    return Graph(
        store=store.url,
        tasks=[t for t in store.tasks() if t.id in task_ids],
        runs=runs,
        versions=versions,
        decisions=decisions,
        evaluations=evaluations,
        edges=edges,
        learned=[p for p in store.learned() if run_id is None or p.fixed_version in wanted],
        pattern_stats=[
            {"pattern": s.pattern, "applied": s.applied, "fixed": s.fixed, "rate": round(s.rate, 3)} for s in stats
        ],
    )


def export(store: ExperienceStore, fmt: Format, *, run_id: int | None = None, task_id: int | None = None) -> str:
    graph = collect(store, run_id=run_id, task_id=task_id)
    if fmt == "json":
        return to_json(graph)
    if fmt == "dot":
        return to_dot(graph)
    if fmt == "html":
        return to_html(graph)
    raise ValueError(f"unknown format {fmt!r}: json, dot or html")


def to_json(graph: Graph) -> str:
    return json.dumps(graph.model_dump(mode="json"), indent=1)


def _latest(graph: Graph) -> dict[tuple[int, int | None], EvaluationRecord]:
    latest: dict[tuple[int, int | None], EvaluationRecord] = {}
    for item in graph.evaluations:
        latest[(item.version_id, item.run_id)] = item
    return latest


def _time(item: EvaluationRecord | None) -> str:
    return "" if item is None or item.time_ms is None else f"{item.time_ms:.4g} ms"


def to_dot(graph: Graph) -> str:
    latest = _latest(graph)
    tasks = {t.id: t for t in graph.tasks}
    by_version: dict[int, EvaluationRecord] = {}
    for (vid, _), measured in latest.items():
        by_version[vid] = measured
    lines = [
        "digraph kope_memory {",
        '  rankdir=TB; node [shape=ellipse, style=filled, fontname="Helvetica", fontsize=10];',
    ]
    versions_by_task: dict[int, list[VersionRecord]] = defaultdict(list)
    for stored in graph.versions:
        versions_by_task[stored.task_id].append(stored)
    for task_id, versions in versions_by_task.items():
        task = tasks.get(task_id)
        label = f"{task.name} ({task.family})" if task else f"task {task_id}"
        lines.append(f'  subgraph cluster_task{task_id} {{ label="{_dot(label)}"; color="#bbbbbb";')
        for stored in versions:
            found = by_version.get(stored.id)
            status = found.status if found else ""
            text = f"v{stored.id}\\n{status}" + (f"\\n{_time(found)}" if _time(found) else "")
            lines.append(
                f'    v{stored.id} [label="{text}", fillcolor="{COLOURS.get(status, "#8a8a8a")}", fontcolor="white"];'
            )
        lines.append("  }")
    refs: set[str] = set()
    for link in graph.edges:
        if link.kind == "derived_from" and link.dst is not None:
            lines.append(f"  v{link.dst} -> v{link.src};")
        elif link.kind == "alternative_of" and link.dst is not None:
            lines.append(
                f'  v{link.dst} -> v{link.src} [style=dashed, color="#999999", constraint=false, arrowhead=none];'
            )
        elif link.kind == "fixed_by" and link.dst is not None:
            lines.append(f'  v{link.src} -> v{link.dst} [color="#2e9d4f", penwidth=2.5, label="fixed_by", fontsize=8];')
        elif link.kind == "used_evidence":
            if link.dst is not None:
                lines.append(f'  v{link.dst} -> v{link.src} [style=dotted, color="#3a6fd8", constraint=false];')
            elif link.ref:
                node = "e_" + "".join(c if c.isalnum() else "_" for c in link.ref)
                if node not in refs:
                    refs.add(node)
                    lines.append(f'  {node} [shape=box, label="{_dot(link.ref)}", fillcolor="#dde6fa"];')
                lines.append(f'  {node} -> v{link.src} [style=dotted, color="#3a6fd8", constraint=false];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


# -- HTML ----------------------------------------------------------------------------------------

_CSS = """
body { font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: #666; font-size: 13px; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px;
       vertical-align: middle; }
svg text { font-size: 11px; }
.version { border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.version:target { border-color: #3a6fd8; box-shadow: 0 0 0 3px #dde6fa; }
pre { background: #f6f8fa; padding: 8px; overflow-x: auto; font-size: 12px; }
table { border-collapse: collapse; font-size: 12px; } td, th { border: 1px solid #ddd; padding: 3px 6px; }
.tag { display: inline-block; padding: 1px 6px; border-radius: 4px; color: white; font-size: 11px; }
details summary { cursor: pointer; }
"""


def to_html(graph: Graph) -> str:
    latest = _latest(graph)
    versions = {v.id: v for v in graph.versions}
    tasks = {t.id: t for t in graph.tasks}
    decisions_by_child: dict[tuple[int, int], DecisionRecord] = {(d.child_id, d.run_id): d for d in graph.decisions}
    evidence: dict[tuple[int, int | None], list[EdgeRecord]] = defaultdict(list)
    for link in graph.edges:
        if link.kind == "used_evidence":
            evidence[(link.src, link.run_id)].append(link)
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>kope experience graph</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>kope experience graph</h1>",
        f"<p class='meta'>{html.escape(graph.store)} — {len(graph.runs)} run(s), {len(graph.versions)} version(s), "
        f"{len(graph.decisions)} decision(s), {len(graph.evaluations)} evaluation(s), {len(graph.edges)} edge(s)</p>",
        "<p class='legend'>"
        + "".join(
            f"<span><span class='dot' style='background:{c}'></span>{s or 'not evaluated'}</span>"
            for s, c in COLOURS.items()
        )
        + "<span>── derived_from</span><span style='color:#999'>- - alternative_of</span>"
        "<span style='color:#2e9d4f'>━ fixed_by</span><span style='color:#3a6fd8'>· · used_evidence</span></p>",
    ]
    for run in graph.runs:
        task = tasks.get(run.task_id)
        summary = run.summary or {}
        speed = summary.get("speedup_vs_start")
        parts.append(
            f"<h2 id='run{run.id}'>run {run.id}: {html.escape(run.kind)} of "
            f"{html.escape(task.name if task else str(run.task_id))}"
            f" <span class='meta'>({html.escape(task.family if task else '')})</span></h2>"
        )
        parts.append(
            f"<p class='meta'>model {html.escape(run.model)}; device {html.escape(run.device)}; "
            f"{html.escape(run.toolchain)}; status <b>{html.escape(run.status or 'unfinished')}</b> "
            f"(stop: {html.escape(run.stop_reason or '-')}); tokens {run.tokens_prompt + run.tokens_completion}"
            + (f"; speed-up over the start {speed:.2f}x" if isinstance(speed, int | float) else "")
            + (f"; timing {html.escape(str(summary.get('method')))}" if summary.get("method") else "")
            + "</p>"
        )
        parts.append(_tree_svg(graph, run, latest, evidence, versions))
        for vid in _run_versions(graph, run):
            parts.append(_version_block(vid, run, versions, latest, decisions_by_child, evidence, tasks))
    if graph.learned:
        parts.append("<h2>Learned patterns</h2>")
        for learned in graph.learned:
            parts.append(
                f"<div class='version'><b>{html.escape(learned.pattern_id)}</b>: {html.escape(learned.title)} "
                f"<span class='meta'>({html.escape(learned.family)}; fixed version "
                f"<a href='#v{learned.fixed_version}'>v{learned.fixed_version}</a>)</span>"
                f"<pre>{html.escape(learned.diff)}</pre></div>"
            )
    if graph.pattern_stats:
        parts.append(
            "<h2>Pattern evidence</h2><table><tr><th>pattern</th><th>applied</th><th>fixed</th>"
            "<th>(fixed+1)/(applied+2)</th></tr>"
        )
        for row in graph.pattern_stats:
            parts.append(
                f"<tr><td>{html.escape(row['pattern'])}</td><td>{row['applied']}</td><td>{row['fixed']}</td>"
                f"<td>{row['rate']:.2f}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _run_versions(graph: Graph, run: RunRecord) -> list[int]:
    seen: list[int] = []
    if run.start_version is not None:
        seen.append(run.start_version)
    for item in graph.evaluations:
        if item.run_id == run.id and item.version_id not in seen:
            seen.append(item.version_id)
    for made in graph.decisions:
        if made.run_id == run.id and made.child_id not in seen:
            seen.append(made.child_id)
    return seen


def _tree_svg(  # noqa: C901 - lays out and draws the whole tree in one pass; the SVG pieces share its coordinates
    graph: Graph,
    run: RunRecord,
    latest: dict[tuple[int, int | None], EvaluationRecord],
    evidence: dict[tuple[int, int | None], list[EdgeRecord]],
    versions: dict[int, VersionRecord],
) -> str:
    members = _run_versions(graph, run)
    if not members:
        return "<p class='meta'>no versions recorded</p>"
    parent: dict[int, int] = {}
    for link in graph.edges:
        if link.run_id == run.id and link.kind == "derived_from" and link.dst is not None and link.src not in parent:
            parent[link.src] = link.dst
    children: dict[int, list[int]] = defaultdict(list)
    for child, par in parent.items():
        if par in members:
            children[par].append(child)
    roots = [v for v in members if v not in parent or parent[v] not in members]
    position: dict[int, tuple[float, int]] = {}
    next_x = [0]

    def place(vid: int, depth: int, guard: set[int]) -> float:
        if vid in guard:
            return position.get(vid, (next_x[0], depth))[0]
        guard.add(vid)
        kids = sorted(children.get(vid, []))
        if not kids:
            x = float(next_x[0])
            next_x[0] += 1
        else:
            xs = [place(k, depth + 1, guard) for k in kids]
            x = sum(xs) / len(xs)
        position[vid] = (x, depth)
        return x

    for root in roots:
        place(root, 0, set())
    for vid in members:
        if vid not in position:
            position[vid] = (float(next_x[0]), 0)
            next_x[0] += 1
    dx, dy, pad = 90, 80, 40
    width = int(max(x for x, _ in position.values()) * dx + 2 * pad + 60)
    height = int(max(d for _, d in position.values()) * dy + 2 * pad + 30)

    def at(vid: int) -> tuple[float, float]:
        x, depth = position[vid]
        return pad + x * dx, pad + depth * dy

    start_time = None
    if run.start_version is not None:
        start_eval = latest.get((run.start_version, run.id))
        start_time = start_eval.time_ms if start_eval else None
    shapes = [f"<svg width='{width}' height='{height}' xmlns='http://www.w3.org/2000/svg' role='img'>"]
    for child, par in parent.items():
        if child in position and par in position:
            (x1, y1), (x2, y2) = at(par), at(child)
            shapes.append(f"<line x1='{x1}' y1='{y1}' x2='{x2}' y2='{y2}' stroke='#555' stroke-width='1.2'/>")
    for link in graph.edges:
        if link.run_id != run.id or link.dst is None or link.src not in position or link.dst not in position:
            continue
        (x1, y1), (x2, y2) = at(link.dst), at(link.src)
        if link.kind == "alternative_of":
            shapes.append(
                f"<path d='M{x1},{y1} Q{(x1 + x2) / 2},{min(y1, y2) - 30} {x2},{y2}' fill='none' "
                f"stroke='#999' stroke-dasharray='4 3'/>"
            )
        elif link.kind == "fixed_by":
            shapes.append(
                f"<line x1='{x2}' y1='{y2}' x2='{x1}' y2='{y1}' stroke='#2e9d4f' stroke-width='4' "
                "stroke-opacity='0.6'/>"
            )
        elif link.kind == "used_evidence":
            shapes.append(
                f"<path d='M{x1},{y1} Q{max(x1, x2) + 40},{(y1 + y2) / 2} {x2},{y2}' fill='none' "
                f"stroke='#3a6fd8' stroke-dasharray='2 3'/>"
            )
    for vid in members:
        x, y = at(vid)
        item = latest.get((vid, run.id))
        status = item.status if item else ""
        colour = COLOURS.get(status, "#8a8a8a")
        label = f"v{vid}"
        detail = _time(item)
        if item is not None and item.time_ms and start_time:
            detail = f"{start_time / item.time_ms:.2f}x"
        external = [e for e in evidence.get((vid, run.id), []) if e.dst is None or e.dst not in position]
        title = html.escape(
            f"v{vid}: {status or 'not evaluated'} {_time(item)}"
            + (f"; evidence: {', '.join(e.ref or '' for e in external)}" if external else "")
        )
        shapes.append(
            f"<a href='#v{vid}-r{run.id}'><circle cx='{x}' cy='{y}' r='14' fill='{colour}'"
            + (" stroke='#3a6fd8' stroke-width='3'" if external else "")
            + f"><title>{title}</title></circle></a>"
        )
        shapes.append(f"<text x='{x}' y='{y + 4}' text-anchor='middle' fill='white'>{label}</text>")
        if detail:
            shapes.append(f"<text x='{x}' y='{y + 28}' text-anchor='middle' fill='#333'>{html.escape(detail)}</text>")
    shapes.append("</svg>")
    return "".join(shapes)


def _version_block(
    vid: int,
    run: RunRecord,
    versions: dict[int, VersionRecord],
    latest: dict[tuple[int, int | None], EvaluationRecord],
    decisions: dict[tuple[int, int], DecisionRecord],
    evidence: dict[tuple[int, int | None], list[EdgeRecord]],
    tasks: dict[int, TaskRecord],
) -> str:
    stored = versions.get(vid)
    item = latest.get((vid, run.id))
    made = decisions.get((vid, run.id))
    status = item.status if item else ""
    head = (
        f"<div class='version' id='v{vid}-r{run.id}'><span id='v{vid}'></span><b>v{vid}</b> "
        "<span class='tag' "
        f"style='background:{COLOURS.get(status, '#8a8a8a')}'>{html.escape(status or 'not evaluated')}</span> "
    )
    if item is not None:
        head += (
            f"<span class='meta'>{item.cases_passed}/{item.cases_total} cases; integrity {html.escape(item.integrity)}"
            + (f"; {_time(item)} ({html.escape(item.timing_method or '')})" if item.time_ms else "")
            + (
                f"; {html.escape(item.error_kind or '')}: {html.escape((item.error_message or '')[:200])}"
                if item.error_kind
                else ""
            )
            + "</span>"
        )
    body = []
    if made is not None:
        body.append(
            f"<h3>decision ({html.escape(made.kind)}) from <a "
            f"href='#v{made.parent_id}-r{run.id}'>v{made.parent_id}</a></h3>"
            f"<p>{html.escape(made.text or '(no explanation)')}</p>"
        )
        if made.diff:
            body.append(f"<details><summary>diff</summary><pre>{html.escape(made.diff)}</pre></details>")
    used = evidence.get((vid, run.id), [])
    if used:
        links = []
        for edge_ in used:
            target = f" → <a href='#v{edge_.dst}'>v{edge_.dst}</a>" if edge_.dst is not None else ""
            links.append(f"<li>{html.escape(edge_.ref or '')}{target}</li>")
        body.append("<h3>evidence injected into the prompt that produced it</h3><ul>" + "".join(links) + "</ul>")
    if stored is not None:
        task = tasks.get(stored.task_id)
        body.append(
            f"<details><summary>source ({html.escape(task.name if task else '')}, "
            f"{stored.hash[:12]})</summary><pre>{html.escape(stored.source)}</pre></details>"
        )
    return head + "".join(body) + "</div>"
