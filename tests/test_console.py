"""Output that is not a terminal is never wrapped: long lines, diff lines above all, come out whole."""

from __future__ import annotations

import io
from pathlib import Path

from conftest import SCALE_GOOD
from typer.testing import CliRunner

from kope.cli import app
from kope.cli.repair import print_diff
from kope.console import KopeConsole
from kope.text import sanitize

LONG = "x" * 150


def test_text_and_diffs_are_whole_when_not_a_terminal() -> None:
    console = KopeConsole(file=io.StringIO(), width=80)
    assert not console.is_terminal
    console.print(f"output: {LONG}")
    console.print_diff(["--- a.py", "+++ b.py", f"-a = 1  # {LONG}", f"+a = 2  # {LONG}"])
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines == [f"output: {LONG}", "--- a.py", "+++ b.py", f"-a = 1  # {LONG}", f"+a = 2  # {LONG}"]


def test_a_terminal_still_wraps_at_its_width() -> None:
    console = KopeConsole(file=io.StringIO(), width=80, force_terminal=True, color_system=None)
    console.print_diff([f"-a = 1  # {LONG}"])
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(lines) >= 2 and all(len(line) <= 80 for line in lines)


def test_the_repair_diff_through_the_cli_keeps_long_lines_whole(tmp_path: Path) -> None:
    """The diff `kope debug` prints after a repair (kope.cli.repair.print_diff), into the CLI runner's captured stdout.

    A whole `kope debug` run costs a fork server and several sandboxed evaluations; the printing is the
    same function either way.
    """
    good = "    _scale_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)"
    buggy = "    _scale_kernel[(n // 256,)](x, y, n, BLOCK=256)"
    comment = "  # one program per block of 256 elements, the whole vector covered, every element written once"
    source = SCALE_GOOD.read_text()
    assert good in source
    candidate = tmp_path / "scale_with_a_long_comment_on_its_launch_line.py"
    candidate.write_text(source.replace(good, buggy + comment))
    fixed = tmp_path / "fixed.py"
    fixed.write_text(source.replace(good, good + comment))
    with CliRunner().isolation() as (stdout, _stderr, _output):
        print_diff(candidate, fixed)
        lines = stdout.getvalue().decode().splitlines()
    assert f"--- {candidate}" in lines and f"+++ {fixed}" in lines
    assert f"-{buggy}{comment}" in lines and f"+{good}{comment}" in lines, lines


def test_kope_kb_show_piped_keeps_paragraphs_whole() -> None:
    result = CliRunner().invoke(app, ["kb", "show", "missing-mask"])
    assert result.exit_code == 0, result.output
    longest = max(result.output.splitlines(), key=len)
    assert len(longest) > 300 and longest.startswith("A Triton program works on a whole block"), longest[:80]


HOSTILE_TEXT = (
    "ok\x1b[2J\x1b[H\x1b]0;pwned\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x9b31mred\u202eevil\rover\x00end"
)


def test_sanitize_takes_out_what_a_terminal_would_obey() -> None:
    clean = sanitize(HOSTILE_TEXT)
    assert clean == "ok link redevil\noverend"
    assert sanitize("a\tb\nc [bold]x[/]") == "a\tb\nc [bold]x[/]"  # tabs, newlines and brackets stay
    assert sanitize("\x1b]0;title with no end") == "0;title with no end"  # an unended sequence loses its escape only


def test_a_terminal_console_shows_no_escape_a_message_carries() -> None:
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    console = KopeConsole(file=io.StringIO(), width=100, force_terminal=True, color_system="standard")
    table = Table("message")
    table.add_row(Text(HOSTILE_TEXT))
    console.print(table)
    console.print(Panel(Text(HOSTILE_TEXT), title="error"))
    console.print(HOSTILE_TEXT, markup=False)
    written = console.file.getvalue()  # type: ignore[attr-defined]
    assert "redevil" in written and "link" in written
    for sequence in ("\x1b[2J", "\x1b[H", "\x1b]", "\x9b", "\u202e", "\r", "\x00", "\x07"):
        assert sequence not in written, repr(sequence)
    assert "\x1b[" in written  # the console's own colours are still there


def test_a_table_is_drawn_whole_when_not_a_terminal() -> None:
    """Piped, a table is as wide as its longest cell: no cell cropped (`…`) or folded mid-token."""
    from rich.table import Table

    table = Table("id", "title")
    table.add_row("learned-offsets-n-elements-4bf7c7", f"a title that is longer than a terminal line {LONG}")
    console = KopeConsole(file=io.StringIO(), width=80)
    console.print(table)
    console.print(f"after: {LONG}")
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert any(f"longer than a terminal line {LONG}" in line for line in lines), lines
    assert all("…" not in line for line in lines) and lines[-1] == f"after: {LONG}"
    assert len(lines) == 6  # top, header, rule, one row, bottom, the line after
    assert console.width == 80  # widened for the table only
