"""Output that is not a terminal is never wrapped: long lines, diff lines above all, come out whole."""

from __future__ import annotations

import io
from pathlib import Path

from conftest import SCALE_GOOD, SCALE_TASK
from typer.testing import CliRunner

from kope.cli import app
from kope.console import KopeConsole

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


def test_kope_debug_piped_prints_whole_diff_lines(tmp_path: Path) -> None:
    """The offline repair of a grid bug whose launch line carries a long comment: the diff's lines, whole."""
    good = "    _scale_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)"
    buggy = "    _scale_kernel[(n // 256,)](x, y, n, BLOCK=256)"
    comment = "  # one program per block of 256 elements, the whole vector covered, every element written once"
    source = SCALE_GOOD.read_text()
    assert good in source
    candidate = tmp_path / "scale_with_a_long_comment_on_its_launch_line.py"
    candidate.write_text(source.replace(good, buggy + comment))
    fixed = tmp_path / "fixed.py"
    args = ["debug", str(SCALE_TASK), str(candidate), "--out", str(fixed), "--device", "cpu", "--no-probes",
            "--repair", "recipes", "--max-iterations", "2", "--store", str(tmp_path / "memory.db")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"--- {candidate}" in lines and f"+++ {fixed}" in lines
    assert f"-{buggy}{comment}" in lines and f"+{good}{comment}" in lines, lines
