"""What kope knows and remembers: `kope kb` (bug patterns, shipped, the user's, and learned) and `kope memory`
(the experience store)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from kope.cli.app import kb_app, memory_app
from kope.cli.options import JsonOpt, StoreOpt
from kope.cli.run import UsageProblem, emit, exit_with, fail, out, reported, say, store, writable_file

if TYPE_CHECKING:
    from kope.knowledge.schema import Pattern
    from kope.memory import ExperienceStore
    from kope.memory.store import LearnedRecord


@kb_app.command("list")
def kb_list(as_json: JsonOpt = False, store_at: StoreOpt = None) -> None:
    """List the patterns: shipped ones, the user's own, and those learned in the experience store."""
    from kope.knowledge.base import KnowledgeBase
    from kope.memory.learned import learned_patterns

    with reported(as_json):
        patterns = list(KnowledgeBase.load().patterns.values())
        with store(store_at, existing=True) as memory:
            known = {p.id for p in patterns}
            if memory is not None:
                patterns += [p for p in learned_patterns(memory) if p.id not in known]
    if as_json:
        emit(
            [
                {"id": p.id, "title": p.title, "origin": p.origin, "recipe": p.recipe.name if p.recipe else None}
                for p in patterns
            ]
        )
        return
    table = Table(title=f"{len(patterns)} patterns", title_justify="left")
    for column in ("id", "title", "recipe", "origin"):
        table.add_column(column)
    for pattern in patterns:
        table.add_row(
            Text(pattern.id), Text(pattern.title), Text(pattern.recipe.name if pattern.recipe else ""), pattern.origin
        )
    out.print(table)


def _learned(memory: ExperienceStore | None, pattern_id: str) -> LearnedRecord | None:
    if memory is None:
        return None
    return next((r for r in memory.learned(10_000) if r.pattern_id == pattern_id), None)


@kb_app.command("show")
def kb_show(
    pattern_id: Annotated[str, typer.Argument(help="Pattern id, as `kope kb list` shows it.")],
    as_json: JsonOpt = False,
    store_at: StoreOpt = None,
) -> None:
    """Show one pattern: symptoms, code cues, explanation and fix; for a learned one also where it was
    learned and how often it fixed a kernel since."""
    from kope.knowledge.base import KnowledgeBase, KnowledgeError
    from kope.memory.learned import as_pattern

    with reported(as_json):
        base = KnowledgeBase.load()
        learned: LearnedRecord | None = None
        evidence: dict[str, int] | None = None
        with store(store_at, existing=True) as memory:
            if pattern_id in base.patterns:
                pattern = base.get(pattern_id)
            else:
                learned = _learned(memory, pattern_id)
                if learned is None:
                    where = f" nor in the experience store {memory.url}" if memory is not None else ""
                    raise KnowledgeError(
                        f"no pattern {pattern_id!r} in the knowledge base{where}; `kope kb list` shows them"
                    )
                pattern = as_pattern(learned)
            if memory is not None:
                stats = memory.pattern_stats([pattern_id]).get(pattern_id)
                evidence = {"applied": stats.applied if stats else 0, "fixed": stats.fixed if stats else 0}
            origin = _origin(memory, learned)
    if as_json:
        payload: dict[str, Any] = pattern.model_dump(mode="json")
        payload["evidence"] = evidence
        payload["learned"] = learned.model_dump(mode="json") if learned else None
        emit(payload)
        return
    _print_pattern(pattern, origin, evidence)


def _origin(memory: ExperienceStore | None, learned: LearnedRecord | None) -> str | None:
    """Where a learned pattern was learned: its task, the versions before and after the fix, the store."""
    if learned is None or memory is None:
        return None
    task = memory.get_task(learned.task_id)
    name = f"task {task.name} ({task.path})" if task is not None else f"task {learned.task_id}"
    versions = f", version {learned.source_version} → {learned.fixed_version}" if learned.fixed_version else ""
    return f"learned from: {name}{versions}, a {learned.family} kernel, in the store {memory.url}"


def _print_pattern(pattern: Pattern, origin: str | None, evidence: dict[str, int] | None) -> None:
    say(Text.assemble((pattern.id, "bold"), f": {pattern.title}"))
    say(pattern.summary)
    if origin:
        say(origin)
    if evidence is not None:
        applied, fixed = evidence["applied"], evidence["fixed"]
        rate = f" ({fixed / applied:.0%})" if applied else ""
        say(f"success: fixed {fixed} of {applied} kernel(s) it was applied to{rate}")
    say("")
    if pattern.symptoms:
        say("symptoms", style="bold")
        for symptom in pattern.symptoms:
            value = "" if symptom.op in ("true", "false") else f" {symptom.value}"
            say(f"  {symptom.weight:+.1f}  {symptom.feature} {symptom.op}{value}  {symptom.note}")
    if pattern.code_cues:
        say("code cues", style="bold")
        for code_cue in pattern.code_cues:
            say(f"  {code_cue.weight:+.1f}  {code_cue.cue}")
    say("\nexplanation", style="bold")
    say(pattern.explanation.strip())
    say("\nfix", style="bold")
    say(pattern.fix.strip())
    if pattern.example is not None:
        say(f"\nexample ({pattern.example.op}): {pattern.example.before!r} -> {pattern.example.after!r}")
    if pattern.recipe is not None:
        say(f"\nrecipe: {pattern.recipe.name}")


@kb_app.command("search")
def kb_search(
    text: Annotated[str, typer.Argument(help="Words to look for (BM25 over the patterns' text).")],
    as_json: JsonOpt = False,
) -> None:
    """Find patterns by text."""
    from kope.knowledge.base import KnowledgeBase

    with reported(as_json):
        found = KnowledgeBase.load().search(text)
    if as_json:
        emit([{"id": p.id, "score": round(score, 3), "title": p.title} for p, score in found])
        return
    if not found:
        say("no pattern matches")
    for pattern, score in found:
        say(Text.assemble(f"{score:6.2f}  ", (pattern.id, "bold"), f": {pattern.title}"))


@kb_app.command("add")
def kb_add(path: Annotated[Path, typer.Argument(help="A pattern file (YAML) to add to your patterns.")]) -> None:
    """Validate a pattern file and copy it into your pattern directory (~/.local/share/kope/patterns)."""
    from kope.cli.run import need_file
    from kope.knowledge.base import KnowledgeBase, load_pattern_file, user_dir

    with reported(False):
        need_file(path, "pattern file")
        pattern = load_pattern_file(path, str(path.parent))
        problems = KnowledgeBase([pattern]).validate()
        if problems:
            raise UsageProblem("; ".join(problems), hint="fix the pattern file; `kope kb validate` explains each rule")
        target = user_dir()
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / f"{pattern.id}.yaml")
        if pattern.example is not None and (path.parent / pattern.example.kernel).is_file():
            shutil.copyfile(path.parent / pattern.example.kernel, target / pattern.example.kernel)
    say(f"added {pattern.id} to {target}")


@kb_app.command("validate")
def kb_validate(
    patterns: Annotated[
        list[Path] | None, typer.Option("--patterns", help="Also validate this directory of patterns.")
    ] = None,
) -> None:
    """Check every pattern: known features, cues and recipes, examples present. Exit 1 on problems."""
    from kope.knowledge.base import KnowledgeBase

    with reported(False):
        for folder in patterns or []:
            if not folder.is_dir():
                raise UsageProblem(f"--patterns {folder} is not a folder", hint="give a folder of pattern files")
        base = KnowledgeBase.load(extra_dirs=patterns or [])
        problems = base.validate()
    for problem in problems:
        say(problem, stderr=True, style="red")
    say(f"{len(base)} patterns, {len(problems)} problem(s)")
    exit_with(1 if problems else 0)


# -- the experience store -------------------------------------------------------------------


@memory_app.command("stats")
def memory_stats(store_at: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Counts of what the store holds, the most useful patterns and the commonest error signatures."""
    with reported(as_json), store(store_at, existing=True) as memory:
        if memory is None:
            raise UsageProblem("--store none: there is no store to show", hint="give --store a store")
        stats = memory.stats()
        signatures = memory.signature_counts(10)
    if as_json:
        emit({**stats.model_dump(), "error_signatures_top": signatures})
        return
    say(Text.assemble((stats.url, "bold"), f" (schema {stats.schema_version})"))
    counts = Table("record", "count", title="what the store holds", title_justify="left")
    rows: list[tuple[str, int]] = [("tasks", stats.tasks), ("runs", stats.runs)]
    rows += [(f"  {kind} runs", n) for kind, n in sorted(stats.runs_by_kind.items())]
    rows += [("versions", stats.versions), ("decisions", stats.decisions), ("evaluations", stats.evaluations)]
    rows += [(f"edges: {kind}", n) for kind, n in stats.edges.items()]
    rows += [
        ("pattern evidence", stats.pattern_evidence),
        ("learned patterns", stats.learned_patterns),
        ("prompt injections", stats.injections),
        ("error signatures", stats.error_signatures),
    ]
    for name, value in rows:
        counts.add_row(name, str(value))
    out.print(counts)
    if stats.top_patterns:
        top = Table("pattern", "fixed", "applied", "success", title="the most useful patterns", title_justify="left")
        for row in stats.top_patterns:
            fixed, applied = int(row["fixed"]), int(row["applied"])
            top.add_row(
                Text(str(row["pattern"])), str(fixed), str(applied), f"{fixed / applied:.0%}" if applied else "-"
            )
        out.print(top)
    if signatures:
        common = Table("count", "error signature", title="the commonest error signatures", title_justify="left")
        for text, count in signatures:
            common.add_row(str(count), Text(text[:200]))
        out.print(common)


@memory_app.command("show")
def memory_show(
    ref: Annotated[str, typer.Argument(help="run:N, version:N, task:N, decision:N, or a bare N (a run).")],
    store_at: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one record with what hangs off it (a run's trajectory, a version's evaluations and edges)."""
    kind, _, key = ref.rpartition(":")
    kind = kind or "run"
    with reported(as_json):
        if not key.isdigit() or kind not in ("run", "version", "task", "decision"):
            raise UsageProblem(f"not a record reference: {ref!r}", hint="give run:N, version:N, task:N or decision:N")
        with store(store_at, existing=True) as memory:
            if memory is None:
                raise UsageProblem("--store none: there is no store to show", hint="give --store a store")
            payload = _record(memory, kind, int(key))
            url = memory.url
    if not payload:
        fail(f"no {kind} {key} in {url}", as_json=as_json, code=1, kind="not-found")
    if as_json:
        emit(payload)
        return
    for name, value in payload.items():
        say(name, style="bold")
        rows = value if isinstance(value, list) else [value]
        for row in rows:
            if isinstance(row, dict):
                shown = {k: (v if not isinstance(v, str) or len(v) < 200 else v[:200] + "…") for k, v in row.items()}
                say("  " + ", ".join(f"{k}={v}" for k, v in shown.items()))
            else:
                say(f"  {row}")


def _record(memory: ExperienceStore, kind: str, number: int) -> dict[str, Any]:
    if kind == "run":
        found = memory.get_run(number)
        if found is None:
            return {}
        return {
            "run": found.model_dump(),
            "decisions": [d.model_dump() for d in memory.decisions(run_id=number)],
            "evaluations": [e.model_dump() for e in memory.evaluations(run_id=number)],
            "edges": [e.model_dump() for e in memory.edges(run_id=number)],
            "injections": [i.model_dump() for i in memory.injections(run_id=number)],
        }
    if kind == "version":
        version = memory.get_version(number)
        if version is None:
            return {}
        return {
            "version": version.model_dump(),
            "evaluations": [e.model_dump() for e in memory.evaluations(version_id=number)],
            "decisions": [d.model_dump() for d in memory.decisions(child_id=number)],
            "edges": [e.model_dump() for e in memory.edges(version_id=number)],
            "lineage": memory.lineage(number),
        }
    if kind == "task":
        task = memory.get_task(number)
        if task is None:
            return {}
        return {"task": task.model_dump(), "runs": [r.model_dump() for r in memory.runs(task_id=number)]}
    decision = memory.get_decision(number)
    return {"decision": decision.model_dump()} if decision is not None else {}


@memory_app.command("export")
def memory_export(
    fmt: Annotated[
        str, typer.Option("--format", help="json (everything), dot (Graphviz) or html (a page to browse).")
    ] = "json",
    out_file: Annotated[Path | None, typer.Option("--out", help="Write here instead of standard output.")] = None,
    run: Annotated[int | None, typer.Option("--run", help="Only this run.")] = None,
    task_id: Annotated[
        int | None, typer.Option("--task", help="Only this task's runs (a task id, see `memory show`).")
    ] = None,
    store_at: StoreOpt = None,
) -> None:
    """Export the experience graph: versions, decisions, evaluations and edges (the HTML view draws the trees)."""
    from kope.memory.export import export

    with reported(False):
        if fmt not in ("json", "dot", "html"):
            raise UsageProblem(f"unknown format {fmt!r}", hint="use --format json, dot or html")
        if out_file is not None:
            writable_file(out_file, "--out")
        with store(store_at, existing=True) as memory:
            if memory is None:
                raise UsageProblem("--store none: there is no store to export", hint="give --store a store")
            text = export(memory, fmt, run_id=run, task_id=task_id)  # type: ignore[arg-type]
    if out_file is None:
        sys.stdout.write(text)
    else:
        out_file.write_text(text)
        say(f"wrote {out_file}", stderr=True)
