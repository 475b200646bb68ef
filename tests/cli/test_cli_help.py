"""`--help` of every kope command: no `<bool>` after a flag (a flag takes no value), types after the rest."""

from __future__ import annotations

import pytest
import typer
from typer.core import TyperOption
from typer.testing import CliRunner

from kope.cli import app

runner = CliRunner()


def _walk(command: typer.core.TyperGroup, ctx: typer.Context, prefix: tuple[str, ...] = ()) -> list[tuple]:
    """(path, command) for the group and everything below it, each resolved as `kope PATH --help` resolves it."""
    found: list[tuple] = [(prefix, command)]
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        assert sub is not None
        if isinstance(sub, typer.core.TyperGroup):
            found += _walk(sub, ctx, (*prefix, name))
        else:
            found.append(((*prefix, name), sub))
    return found


def test_no_command_shows_a_type_after_a_flag() -> None:
    """What typer's rich help prints in the type column, for every option of every command (no rendering: fast)."""
    root = typer.main.get_command(app)
    with root.make_context("kope", ["--help"], resilient_parsing=True) as ctx:
        commands = _walk(root, ctx)  # type: ignore[arg-type]
        assert len(commands) >= 30, [path for path, _ in commands]
        flags = 0
        for path, command in commands:
            options = [p for p in command.get_params(ctx) if isinstance(p, TyperOption)]
            assert any(p.opts == ["--help"] for p in options), path
            for option in options:
                shown = option.display_type_rich(ctx) or ""
                if option.is_flag and not option.count:
                    flags += 1
                    assert shown == "", (path, option.opts, shown)
                else:
                    assert shown.startswith("<") or shown.isupper(), (path, option.opts, shown)
        assert flags >= 60


@pytest.mark.parametrize("path", [(), ("eval",), ("kb", "list"), ("bench", "run"), ("debug",)])
def test_rendered_help_has_no_bool(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output and "--help" in result.output
    if path == ("eval",):
        lines = {line.split()[1]: line for line in result.output.splitlines() if line.startswith("│ --")}
        assert "<int range>" in lines["--trials"] and "<path>" in lines["--cases"]
        assert "<" not in lines["--json"] and "<" not in lines["--timing"]
