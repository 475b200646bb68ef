"""The command line's consoles, and the one function that makes untrusted text safe to show.

Rich measures the width from whichever of stdin, stdout and stderr is a terminal, and falls back to 80
columns when none is (output captured by a pipeline or a CI log, `kope debug ... > log`). Wrapping there
breaks every longer line in two, and a diff line broken in two is no longer a diff. So when the output
is not a terminal, printed text is soft-wrapped (each line written whole, whatever its length), and
diffs are printed as plain text (a file or a pipe gets no colours anyway).

A candidate decides much of what kope prints: its error messages, tracebacks, kernel names, the lines
the gates quote. `sanitize` takes out what a terminal would obey rather than show (escape sequences,
other control characters, bidirectional overrides); every KopeConsole applies it to all the text it
renders, and the triage report to every value it writes into its page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.syntax import Syntax

_ESCAPES = re.compile(
    r"""
    \x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)      # OSC (window title, hyperlinks), ended by BEL or ST
    | \x1b[P^_X][^\x1b\n]*\x1b\\           # DCS, PM, APC, SOS strings
    | \x1b\[[0-?]*[ -/]*[@-~]?              # CSI (cursor, erase, colours)
    | \x9b[0-?]*[ -/]*[@-~]?                # CSI as one C1 character
    | \x1b[ -/]*[0-~]?                      # any other escape sequence
    """,
    re.VERBOSE,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def sanitize(text: str) -> str:
    """`text` without terminal escape sequences, control characters (newlines and tabs stay; a carriage
    return becomes a newline) or bidirectional overrides."""
    if text.isprintable():
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


class KopeConsole(Console):
    """A rich Console that shows no control characters from the text it renders, and does not wrap
    lines when its output is not a terminal."""

    def print(self, *objects: Any, **options: Any) -> None:
        if options.get("soft_wrap") is None and not self.is_terminal:
            options["soft_wrap"] = True
        super().print(*objects, **options)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or segment.text.isprintable():
                yield segment
            else:
                yield Segment(sanitize(segment.text), segment.style)

    def print_diff(self, lines: list[str]) -> None:
        """A unified diff: highlighted and wrapped at the width on a terminal, else plain and whole."""
        text = "\n".join(lines)
        if self.is_terminal:
            self.print(Syntax(text, "diff", theme="ansi_dark", background_color="default", word_wrap=True))
        else:
            self.print(text, markup=False, highlight=False, emoji=False)
