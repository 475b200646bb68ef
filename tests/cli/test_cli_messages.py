"""What `kope eval` prints of a candidate's own messages: never an empty one, never an escape sequence.

A candidate decides its error messages and tracebacks. A message full of terminal escapes is shown as
text (the escapes taken out, `[/]` shown rather than parsed as markup); an exception raised without a
message (a bare `assert` while the module loads) is named by the candidate's line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kope.cli import app
from kope.ops import get_op
from kope.triage.sample import small_cases

KERNEL = get_op("relu").kernel_path.read_text()


def _eval(tmp_path: Path, name: str, source: str, *extra: str) -> str:
    task = tmp_path / "task.py"
    task.write_text(small_cases(get_op("relu").task_path.read_text()))
    candidate = tmp_path / name
    candidate.write_text(source)
    result = CliRunner().invoke(app, ["eval", str(task), str(candidate), "--device", "cpu", "--trials", "1", *extra])
    assert result.exit_code == 2, result.output  # an error
    return result.output


@pytest.mark.slow
def test_escapes_in_a_message_reach_no_terminal(tmp_path: Path) -> None:
    hostile = "        raise RuntimeError('\\x1b[2J\\x1b[3J\\x1b]0;pwned\\x07boom [/] [bold]end\\r')\n"
    output = _eval(tmp_path, "escapes.py", KERNEL.replace("        x = x.contiguous()\n", hostile, 1))
    assert "RuntimeError: boom [/] [bold]end" in output  # the message, as text
    assert "\x1b" not in output and "\x07" not in output and "\r" not in output


@pytest.mark.slow
def test_a_bare_assert_names_its_line(tmp_path: Path) -> None:
    source = KERNEL.replace("BLOCK = 1024\n", "BLOCK = 1024\nassert BLOCK % 3 == 0\n", 1)
    line = source.splitlines().index("assert BLOCK % 3 == 0") + 1
    error = json.loads(_eval(tmp_path, "bare.py", source, "--json"))["error"]
    assert error["kind"] == "load"
    assert (
        error["message"]
        == f"executing the candidate module failed: AssertionError at line {line}: assert BLOCK % 3 == 0"
    )
