"""`kope triage`: classify a run's candidates against their tasks, and repair the near misses."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from kope.cli.app import app
from kope.cli.options import (
    STOP_HELP,
    AddressOpt,
    CacheDirOpt,
    DeviceOpt,
    EmulationOpt,
    ExecutorOpt,
    JsonOpt,
    ModuleModeOpt,
    PolicyOpt,
    SandboxOpt,
    TimeoutOpt,
    ToleranceOpt,
    TrialsOpt,
)
from kope.cli.run import (
    Evaluation,
    UsageProblem,
    emit,
    err,
    executor_for,
    exit_with,
    given,
    model,
    no_store,
    out,
    reported,
    say,
    writable_dir,
)

if TYPE_CHECKING:
    from kope.triage import TriageSummary
    from kope.triage.causes import Cause


@app.command("triage", epilog=STOP_HELP)
def triage_command(
    tasks: Annotated[
        Path, typer.Argument(help="The task files: a folder (KernelBench levels, a task per folder) or one file.")
    ],
    candidates: Annotated[
        Path, typer.Argument(help="The candidates: a folder in a known layout, or a manifest (.csv, .json).")
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", help="Results folder: results.jsonl (reruns resume), repaired/, report.html.")
    ],
    model_spec: Annotated[
        str, typer.Option("--model", help="Repairs: offline (recipes), openai:MODEL, anthropic:MODEL, replay:FILE.")
    ] = "offline",
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    sandbox: SandboxOpt = None,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = None,
    module_mode: ModuleModeOpt = None,
    trials: TrialsOpt = None,
    timeout: TimeoutOpt = None,
    cache_dir: CacheDirOpt = None,
    store_at: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Record every repair in an experience store: a SQLAlchemy URL (postgresql+psycopg://... for a "
            "shared one) or a SQLite file (on SQLite, repairs take turns on its write lock). `none` records nothing.",
            show_default="none: nothing is recorded",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, help="Token budget of the whole run's repairs.", show_default="no limit"),
    ] = None,
    max_seconds: Annotated[
        float | None,
        typer.Option(
            "--max-seconds",
            min=1,
            help="Time budget of the whole run, in seconds: a hard limit, the run ends within it plus one "
            "evaluation timeout.",
            show_default="no limit",
        ),
    ] = None,
    max_iterations: Annotated[
        int | None, typer.Option("--max-iterations", min=1, help="Model calls per repair at most.")
    ] = None,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Local worker processes (or a local Ray cluster's CPUs).")
    ] = 1,
    cuda_emulation: EmulationOpt = True,
    no_repair: Annotated[
        bool, typer.Option("--no-repair", help="Classify only: nothing is repaired (repair: skipped).")
    ] = False,
) -> None:
    """Triage a run: match candidates to tasks, classify each (pass, near-miss, broken, cheat...), repair near misses.

    A broken candidate is repaired too when it stops on a rule of Triton's API that kope can mend (a runtime value
    where a constant is needed, an autotuned meta-parameter passed again, a module never imported...).

    Progress goes to stderr: a bar on a terminal, one line per candidate in a log. The summary gives the
    classes before and after repair, each cause of failure once with its count and an example, and (from a
    manifest with a source_verdict column) the classes by the pipeline's own verdict.
    """
    from kope.triage import match, triage
    from kope.triage.progress import TriageProgress
    from kope.triage.run import read_rows

    with reported(as_json):
        run = Evaluation(
            device, sandbox, policy, tolerance, trials, timeout, cache_dir=cache_dir, module_mode=module_mode
        ).check()
        for path, what in ((tasks, "tasks"), (candidates, "candidates")):
            if not path.exists():
                raise UsageProblem(f"no {what} at {path}", hint="check the path")
        writable_dir(out_dir, "--out")
        model(model_spec)
        matching = match(tasks, candidates)
        for lost in matching.unmatched:
            say(f"no task for {lost.candidate}: {lost.reason}", stderr=True)
        chosen = executor_for(executor, workers, address, run.resolved)
        done = len({r.id for r in read_rows(out_dir)} & {i.id for i in matching.items}) if out_dir.exists() else 0
        bar = TriageProgress(len(matching.items), done=done, console=err)
        try:
            with bar:
                summary = triage(
                    tasks,
                    candidates,
                    out_dir,
                    executor=chosen,  # type: ignore[arg-type]
                    model=model_spec,
                    matching=matching,
                    options=run.options(cuda_emulation=cuda_emulation),
                    max_tokens=max_tokens,
                    max_seconds=max_seconds,
                    store=None if store_at is None or no_store(store_at) else store_at,
                    cache_dir=run.cache(),
                    progress=lambda row, s: bar.update(row, s.counts("after"), s.saved),
                    repair=not no_repair,
                    **given(max_iterations=max_iterations),
                )
        finally:
            chosen.close()  # type: ignore[attr-defined]
    causes = summary.causes()
    result = {
        "candidates": summary.total,
        "ran": summary.ran,
        "resumed": summary.resumed,
        "unmatched": len(summary.unmatched),
        "classes": list(summary.classes),
        "before": summary.counts("before"),
        "after": summary.counts("after"),
        "saved": summary.saved,
        "tokens": summary.tokens,
        "seconds": summary.seconds,
        "emulated": summary.emulated,
        "causes": [cause.model_dump() for cause in causes],
        "by_source_verdict": summary.by_source_verdict(),
        "by_model": summary.by_model(),
        "report": str(summary.out / "report.html"),
        "results": str(summary.out / "results.jsonl"),
    }
    if as_json:
        emit(result)
        exit_with(0)
    print_triage(summary, causes)
    say(
        f"{summary.total} candidate(s), {len(summary.unmatched)} without a task; pass rate "
        f"{summary.pass_rate('before'):.0%} → {summary.pass_rate('after'):.0%}, {summary.saved} saved, "
        f"{summary.tokens} tokens, {summary.seconds:.0f} s; report: {result['report']}"
    )


def print_triage(summary: TriageSummary, causes: list[Cause], shown: int = 15) -> None:
    """The classes before and after repair, the causes (the most common first), the classes by verdict."""
    classes = Table(title="classes", title_justify="left")
    classes.add_column("")
    for name in summary.classes:
        classes.add_column(name, justify="right")
    if summary.emulated:
        say(f"{summary.emulated} of {len(summary.rows)} judged with CUDA emulated on the CPU interpreter (no GPU here)")
    before, after = summary.counts("before"), summary.counts("after")
    classes.add_row("before", *(str(before[n]) for n in summary.classes))
    classes.add_row("after repair", *(str(after[n]) for n in summary.classes))
    out.print(classes)
    if causes:
        say(f"causes ({len(causes)}), the most common first (numbers and paths taken out):")
        for cause in causes[:shown]:
            message = f": {cause.message}" if cause.message else ""
            say(f"  {cause.count} × {cause.klass} · {cause.kind}{message}  (e.g. {cause.example})")
        if len(causes) > shown:
            say(f"  ... {len(causes) - shown} more in the report")
    for title, counts in (("by source verdict", summary.by_source_verdict()), ("by model", summary.by_model())):
        if not counts:
            continue
        table = Table(title=f"classes {title}", title_justify="left")
        table.add_column(title.split()[-1])
        for name in summary.classes:
            table.add_column(name, justify="right")
        table.add_column("total", justify="right")
        for key, row in counts.items():
            table.add_row(Text(key), *(str(row[n]) for n in summary.classes), str(sum(row.values())))
        out.print(table)
