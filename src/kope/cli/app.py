"""The `kope` command group, its sub-groups, and the root options (`--version`, `--debug`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup, TyperOption

from kope.cli.options import library_default
from kope.cli.run import settings

if TYPE_CHECKING:
    from typer._click import Command, Context, Parameter


ORDER = ("eval", "check", "cases", "diagnose", "trace", "doctor", "debug", "regenerate", "optimize", "triage")
"""The commands in the order `kope --help` lists them (the groups follow)."""


class _Group(TyperGroup):
    """kope's command group. Its commands' help (sub-groups' too) shows no type after a flag (typer's rich
    help prints `<bool>` after every flag, as if it took a value), and shows the library's default of each
    option that has one (`kope.cli.options.library_default`), read when the command is resolved."""

    def get_params(self, ctx: Context) -> list[Parameter]:
        return _blank_flags(super().get_params(ctx))

    def list_commands(self, ctx: Context) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: ORDER.index(name) if name in ORDER else len(ORDER))

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _prepare(command, ctx, cmd_name)
        return command


def _blank_flags(params: list[Parameter]) -> list[Parameter]:
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and not param.count:
            param.metavar = ""
    return params


def _prepare(command: Command, ctx: Context, name: str) -> None:
    for param in _blank_flags(command.get_params(ctx)):
        if isinstance(param, TyperOption) and param.default is None and not isinstance(param.show_default, str):
            value = next((library_default(name, opt) for opt in param.opts if opt.startswith("--")), None)
            if value is not None:
                param.show_default = f"{value:g}" if isinstance(value, float) else str(value)
    for sub_name, sub in getattr(command, "commands", {}).items():
        _prepare(sub, ctx, sub_name)


app = typer.Typer(
    name="kope",
    cls=_Group,
    help=(
        "Repair and optimize hardware kernels (Triton first, CUDA C++ second), honestly.\n\n"
        "`kope debug TASK CANDIDATE` repairs a near-miss kernel (offline recipes by default, or an LLM with "
        "`--model`); `kope eval TASK CANDIDATE` checks a kernel against a KernelBench-format task on every "
        "case, with the integrity gates; `kope ops list` shows the built-in operator suite.\n\n"
        "Exit status: 0 done, 1 the kernel is not right or not repaired, 2 a usage or environment error."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ops_app = typer.Typer(help="The built-in operator suite: tasks with correct Triton kernels.", no_args_is_help=True)
cache_app = typer.Typer(help="kope's cache of reference outputs.", no_args_is_help=True)
kb_app = typer.Typer(help="The knowledge base of bug patterns used by diagnosis and repair.", no_args_is_help=True)
bench_app = typer.Typer(help="Near-miss suites and the experiments on them: mutate, run, report.", no_args_is_help=True)
memory_app = typer.Typer(help="The experience store: what every debug and optimize run recorded.", no_args_is_help=True)
app.add_typer(ops_app, name="ops")
app.add_typer(cache_app, name="cache")
app.add_typer(kb_app, name="kb")
app.add_typer(bench_app, name="bench")
app.add_typer(memory_app, name="memory")


def _version(value: bool) -> None:
    if value:
        from kope import __version__

        typer.echo(f"kope {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print kope's version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")] = False,
) -> None:
    """Repair and optimize hardware kernels, honestly."""
    settings.debug = debug
