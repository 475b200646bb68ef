"""The command line's consoles: rich wraps at the terminal's width, and not at all without a terminal.

Rich measures the width from whichever of stdin, stdout and stderr is a terminal, and falls back to 80
columns when none is (output captured by a pipeline or a CI log, `kope debug ... > log`). Wrapping there
breaks every longer line in two, and a diff line broken in two is no longer a diff. So when the output
is not a terminal, printed text is soft-wrapped (each line written whole, whatever its length), and
diffs are printed as plain text (a file or a pipe gets no colours anyway).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.syntax import Syntax


class KopeConsole(Console):
    """A rich Console that does not wrap lines when its output is not a terminal."""

    def print(self, *objects: Any, **options: Any) -> None:
        if options.get("soft_wrap") is None and not self.is_terminal:
            options["soft_wrap"] = True
        super().print(*objects, **options)

    def print_diff(self, lines: list[str]) -> None:
        """A unified diff: highlighted and wrapped at the width on a terminal, else plain and whole."""
        text = "\n".join(lines)
        if self.is_terminal:
            self.print(Syntax(text, "diff", theme="ansi_dark", background_color="default", word_wrap=True))
        else:
            self.print(text, markup=False, highlight=False, emoji=False)
