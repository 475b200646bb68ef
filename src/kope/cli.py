"""The `kope` command line: each command is a thin call into the library."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from kope.errors import KopeError

app = typer.Typer(
    name="kope",
    help=(
        "Repair and optimize hardware kernels (Triton first, CUDA C++ second), honestly.\n\n"
        "Start with `kope eval TASK CANDIDATE` to check a kernel against a KernelBench-format task; "
        "`kope ops list` shows the built-in operator suite."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ops_app = typer.Typer(help="The built-in operator suite: tasks with correct Triton kernels.", no_args_is_help=True)
cache_app = typer.Typer(help="kope's cache of reference outputs.", no_args_is_help=True)
app.add_typer(ops_app, name="ops")
app.add_typer(cache_app, name="cache")

out = Console()
err = Console(stderr=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a readable report.")]
DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        help="cpu (Triton runs in its interpreter), cuda, cuda:N, or auto (cuda when an NVIDIA driver is present).",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a size parameter of the task in every case: NAME=VALUE (repeatable)."),
]
CasesOpt = Annotated[
    Path | None,
    typer.Option("--cases", help="A JSON file with a list of override dicts, one per case (replaces the task's cases)."),
]


def _fail(message: str, *, as_json: bool, code: int = 2, kind: str = "task") -> NoReturn:
    if as_json:
        out.print_json(json.dumps({"status": "error", "error": {"kind": kind, "message": message}}))
    else:
        err.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


@contextmanager
def _errors_reported(as_json: bool) -> Iterator[None]:
    try:
        yield
    except KopeError as exc:
        _fail(str(exc), as_json=as_json)


@app.command("eval")
def eval_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format (Model, get_inputs, get_init_inputs).")],
    candidate: Annotated[Path, typer.Argument(help="Candidate file defining class ModelNew.")],
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Run only the case of this name (repeatable).")
    ] = None,
    visible_only: Annotated[
        bool, typer.Option("--visible-only", help="Run only the cases an agent is shown (default: every case).")
    ] = False,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Runs per case, each with fresh seeded inputs.")] = 3,
    seed: Annotated[int, typer.Option("--seed", help="Base seed of inputs and parameters.")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Wall-time limit of each run, in seconds.")] = 60.0,
    memory: Annotated[int, typer.Option("--memory", min=64, help="Memory limit of each run, in MB.")] = 4096,
    timing: Annotated[
        bool | None,
        typer.Option("--timing/--no-timing", help="Measure time (default: on for CUDA, off for the CPU interpreter)."),
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Where reference outputs are cached (default ~/.cache/kope).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Recompute reference outputs.")] = False,
) -> None:
    """Evaluate CANDIDATE against TASK on every case, sandboxed.

    Exit status: 0 pass, 1 fail or reject, 2 error.
    """
    from kope import paths
    from kope.device import resolve_device
    from kope.evaluate import EvalOptions, Evaluator
    from kope.render import case_outcome, print_eval
    from kope.task import load_cases_file, load_task, parse_set

    with _errors_reported(as_json):
        try:
            resolved = resolve_device(device)
        except ValueError as exc:
            _fail(str(exc), as_json=as_json)
        options = EvalOptions(
            device=resolved,
            trials=trials,
            seed=seed,
            timeout_s=timeout,
            memory_mb=memory,
            timing=resolved.startswith("cuda") if timing is None else timing,
        )
        loaded = load_task(task)
        overrides = parse_set(set_ or [])
        declared = load_cases_file(cases_file) if cases_file is not None else None
        which: list[str] | str = list(case) if case else ("visible" if visible_only else "all")
        cache = None if no_cache else (cache_dir or paths.cache_dir() / "reference")
        with Evaluator(cache_dir=cache) as evaluator, _progress(not as_json) as report:
            chosen = evaluator.cases(loaded, set_overrides=overrides, declared=declared, options=options)

            def on_case(result: object) -> None:
                from kope.evaluate.results import CaseResult

                if isinstance(result, CaseResult):
                    report(f"case {result.name}: {case_outcome(result).plain}")

            result = evaluator.evaluate(
                loaded, candidate, options=options, cases=chosen, which=which, on_case=on_case
            )
    if as_json:
        out.print_json(result.model_dump_json())
    else:
        print_eval(result, out)
    raise typer.Exit(result.exit_code)


@app.command("check")
def check_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate file defining class ModelNew.")],
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    all_cases: Annotated[
        bool, typer.Option("--all-cases", help="Run the dynamic checks on every case (default: the visible ones).")
    ] = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Wall-time limit of each run, in seconds.")] = 60.0,
) -> None:
    """Run the integrity gates on CANDIDATE and explain each finding in plain words.

    Static rules read the source; dynamic rules watch it run on the task's visible case(s) (two
    trials, so the caching probe can run). Exit status: 0 clean, 1 rejected, 2 error.
    """
    from kope.device import resolve_device
    from kope.evaluate import EvalOptions, Evaluator
    from kope.render import integrity_report
    from kope.task import load_cases_file, load_task, parse_set

    with _errors_reported(as_json):
        try:
            resolved = resolve_device(device)
        except ValueError as exc:
            _fail(str(exc), as_json=as_json)
        options = EvalOptions(device=resolved, trials=2, timeout_s=timeout)
        loaded = load_task(task)
        with Evaluator() as evaluator, _progress(not as_json) as report:
            report("running the candidate")
            chosen = evaluator.cases(
                loaded,
                set_overrides=parse_set(set_ or []),
                declared=load_cases_file(cases_file) if cases_file else None,
                options=options,
            )
            result = evaluator.evaluate(loaded, candidate, options=options, cases=chosen,
                                        which="all" if all_cases else "visible")
    integrity = result.integrity
    code = 1 if integrity.verdict == "reject" else 0
    if result.error is not None:
        code = 2 if integrity.verdict == "clean" else 1
    if as_json:
        out.print_json(json.dumps({"verdict": integrity.verdict, "findings": [f.model_dump() for f in integrity.findings],
                                   "numeric_status": result.status, "error": result.error.model_dump() if result.error else None}))
    else:
        out.print(integrity_report(integrity, candidate.read_text(errors="replace")))
        if result.error is not None:
            out.print(f"[yellow]the candidate did not run to the end ({result.error.kind}): {result.error.message}; "
                      "dynamic checks are incomplete[/]", highlight=False)
    raise typer.Exit(code)


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str], None]]:
    if not enabled or not err.is_terminal:
        yield lambda message: None
        return
    with err.status("evaluating (starting the sandbox)...") as status:
        yield lambda message: status.update(f"evaluating... {message}")


@ops_app.command("list")
def ops_list(
    as_json: JsonOpt = False,
    family: Annotated[str | None, typer.Option("--family", help="Only operators of this family.")] = None,
) -> None:
    """List the operators of the built-in suite."""
    from rich.table import Table

    from kope.ops import list_ops

    ops = list_ops(family)
    if as_json:
        rows = [{"name": op.name, "family": op.family, "summary": op.summary, "task": str(op.task_path),
                 "kernel": str(op.kernel_path)} for op in ops]
        out.print_json(json.dumps(rows))
        return
    table = Table(title=f"{len(ops)} operators", title_justify="left")
    for column in ("name", "family", "summary"):
        table.add_column(column)
    for op in ops:
        table.add_row(op.name, op.family, op.summary)
    out.print(table)


@ops_app.command("path")
def ops_path(
    name: Annotated[str, typer.Argument(help="Operator name, as `kope ops list` shows it.")],
    kernel: Annotated[bool, typer.Option("--kernel", help="Print only the kernel's path.")] = False,
    task: Annotated[bool, typer.Option("--task", help="Print only the task's path.")] = False,
) -> None:
    """Print where an operator's task and kernel live (task first)."""
    from kope.ops import UnknownOpError, get_op

    try:
        op = get_op(name)
    except UnknownOpError as exc:
        _fail(str(exc.args[0]), as_json=False)
    if kernel and not task:
        out.print(str(op.kernel_path), highlight=False, soft_wrap=True)
    elif task and not kernel:
        out.print(str(op.task_path), highlight=False, soft_wrap=True)
    else:
        out.print(f"{op.task_path}\n{op.kernel_path}", highlight=False, soft_wrap=True)


@cache_app.command("clear")
def cache_clear(
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="The cache to clear.")] = None,
) -> None:
    """Remove cached reference outputs."""
    from kope import paths
    from kope.evaluate.cache import ReferenceCache

    removed = ReferenceCache(cache_dir or paths.cache_dir() / "reference").clear()
    out.print(f"removed {removed} cached reference entries")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
