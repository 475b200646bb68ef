"""The built-in operator suite (`kope ops`) and the reference cache (`kope cache`)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from kope.cli.app import cache_app, ops_app
from kope.cli.options import CacheDirOpt, JsonOpt
from kope.cli.run import UsageProblem, emit, out, reported, say, writable_dir


@ops_app.command("list")
def ops_list(
    as_json: JsonOpt = False,
    family: Annotated[str | None, typer.Option("--family", help="Only operators of this family.")] = None,
) -> None:
    """List the operators of the built-in suite."""
    from kope.ops import list_ops

    ops = list_ops(family)
    if as_json:
        emit(
            [
                {
                    "name": op.name,
                    "family": op.family,
                    "summary": op.summary,
                    "task": str(op.task_path),
                    "kernel": str(op.kernel_path),
                }
                for op in ops
            ]
        )
        return
    table = Table(title=f"{len(ops)} operators", title_justify="left")
    for column in ("name", "family", "summary"):
        table.add_column(column)
    for op in ops:
        table.add_row(Text(op.name), Text(op.family), Text(op.summary))
    out.print(table)


@ops_app.command("path")
def ops_path(
    name: Annotated[str, typer.Argument(help="Operator name, as `kope ops list` shows it.")],
    kernel: Annotated[bool, typer.Option("--kernel", help="Print only the kernel's path.")] = False,
    task: Annotated[bool, typer.Option("--task", help="Print only the task's path.")] = False,
) -> None:
    """Print where an operator's task and kernel live (task first)."""
    from kope.ops import UnknownOpError, get_op

    with reported(False):
        try:
            op = get_op(name)
        except UnknownOpError as exc:
            raise UsageProblem(str(exc.args[0]), hint="`kope ops list` shows the operators") from None
    if kernel and not task:
        say(str(op.kernel_path))
    elif task and not kernel:
        say(str(op.task_path))
    else:
        say(f"{op.task_path}\n{op.kernel_path}")


@cache_app.command("clear")
def cache_clear(cache_dir: CacheDirOpt = None) -> None:
    """Remove cached reference outputs."""
    from kope import paths
    from kope.evaluate.cache import ReferenceCache

    with reported(False):
        if cache_dir is not None:
            writable_dir(cache_dir, "--cache-dir")
        removed = ReferenceCache(cache_dir or paths.cache_dir() / "reference").clear()
    say(f"removed {removed} cached reference entries")
