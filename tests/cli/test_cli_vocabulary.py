"""One spelling per concept: every command's options against the shared vocabulary, the old spellings hidden
(and still working, with a deprecation line), the library's defaults shown, every stop reason in --help."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest import SCALE_TASK
from typer.core import TyperOption
from typer.testing import CliRunner

from kope.cli import app
from kope.cli.options import CANONICAL, RENAMED
from kope.loop import STOP_REASONS

runner = CliRunner()

EVALUATION = {"--json", "--device", "--sandbox", "--policy", "--tolerance", "--trials", "--timeout", "--cache-dir"}
CASES = {"--set", "--cases"}
SEARCH = {"--out", "--store", "--max-tokens", "--max-seconds", "--max-iterations"}
REQUIRED: dict[tuple[str, ...], set[str]] = {
    ("eval",): EVALUATION | CASES,
    ("check",): EVALUATION | CASES,
    ("diagnose",): EVALUATION | CASES,
    ("debug",): EVALUATION | CASES | SEARCH,
    ("optimize",): EVALUATION | CASES | SEARCH,
    ("regenerate",): EVALUATION | CASES | {"--out"},
    ("triage",): EVALUATION | SEARCH,
    ("bench", "run"): EVALUATION - {"--json"} | {"--out", "--max-iterations"},
}
"""The commands that evaluate or search, and the part of the vocabulary each must take."""

SYNONYMS = {
    *RENAMED,
    "--output",
    "--out-file",
    "--budget",
    "--token-budget",
    "--time-budget",
    "--max-steps",
    "--steps",
    "--timeout-s",
    "--seconds",
    "--cache",
    "--memory-store",
    "--db",
    "--integrity-policy",
    "--atol",
    "--rtol",
    "--override",
    "--case-file",
}
"""Second spellings of the vocabulary's concepts: none may be shown by any command."""


def _commands() -> list[tuple[tuple[str, ...], list[TyperOption]]]:
    root = typer.main.get_command(app)
    found: list[tuple[tuple[str, ...], list[TyperOption]]] = []
    with root.make_context("kope", ["--help"], resilient_parsing=True) as ctx:

        def walk(group: typer.core.TyperGroup, prefix: tuple[str, ...]) -> None:
            for name in group.list_commands(ctx):
                sub = group.get_command(ctx, name)
                assert sub is not None
                if isinstance(sub, typer.core.TyperGroup):
                    walk(sub, (*prefix, name))
                else:
                    options = [p for p in sub.get_params(ctx) if isinstance(p, TyperOption)]
                    found.append(((*prefix, name), options))

        walk(root, ())  # type: ignore[arg-type]
    return found


def test_every_command_speaks_one_vocabulary() -> None:
    commands = dict(_commands())
    assert len(commands) >= 25
    for path, options in commands.items():
        shown = {opt for option in options if not option.hidden for opt in option.opts}
        assert not shown & SYNONYMS, (path, shown & SYNONYMS)
        for option in options:
            if option.hidden:
                assert set(option.opts) <= set(RENAMED), (path, option.opts)  # only the old spellings hide
    for path, wanted in REQUIRED.items():
        shown = {opt for option in commands[path] if not option.hidden for opt in option.opts}
        assert wanted <= shown, (path, wanted - shown)
        assert wanted <= set(CANONICAL)


@pytest.mark.parametrize(
    ("command", "old", "value"),
    [
        ("debug", "--budget-tokens", "500"),
        ("debug", "--budget-seconds", "5"),
        ("optimize", "--iterations", "2"),
        ("optimize", "--budget-seconds", "5"),
        ("regenerate", "--out-dir", "somewhere"),
    ],
)
def test_old_spellings_still_work_and_say_so(tmp_path: Path, command: str, old: str, value: str) -> None:
    """Hidden from --help, accepted, with a deprecation line (the missing file then stops the run: exit 2)."""
    args = [command, str(SCALE_TASK)] + ([] if command == "regenerate" else [str(tmp_path / "missing.py")])
    result = runner.invoke(app, [*args, old, value])
    assert result.exit_code == 2, result.output
    assert f"{old} is deprecated" in result.output and RENAMED[old] in result.output
    both = runner.invoke(app, [*args, old, value, RENAMED[old], value])
    assert both.exit_code == 2 and "are the same option" in both.output
    assert old not in runner.invoke(app, [command, "--help"], terminal_width=200).output


def test_version() -> None:
    from kope import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"kope {__version__}"


def test_help_shows_the_librarys_defaults_and_every_stop_reason() -> None:
    from kope.agents.optimize import OptimizeConfig
    from kope.evaluate import EvalOptions
    from kope.loop import LoopLimits

    debug = " ".join(runner.invoke(app, ["debug", "--help"], terminal_width=400).output.split())
    optimize = " ".join(runner.invoke(app, ["optimize", "--help"], terminal_width=400).output.split())
    assert f"[default: ({LoopLimits().max_seconds:g})]" in debug
    assert f"[default: ({OptimizeConfig().max_seconds:g})]" in optimize
    assert f"[default: ({EvalOptions().trials})]" in debug
    for reason in STOP_REASONS:
        assert reason in debug and reason in optimize, reason
