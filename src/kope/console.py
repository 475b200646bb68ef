"""The command line's consoles, and the one function that makes untrusted text safe to show.

Rich measures the width from whichever of stdin, stdout and stderr is a terminal, and falls back to 80
columns when none is (output captured by a pipeline or a CI log, `kope debug ... > log`). Wrapping there
breaks every longer line in two, and a diff line broken in two is no longer a diff. So when the output
is not a terminal, printed text is soft-wrapped (each line written whole, whatever its length), a table
is drawn as wide as its longest cells (no cell cropped or wrapped), and diffs are printed as plain text (a
file or a pipe gets no colours anyway). Emoji codes are off: a
model or file name such as `openai:m:` is printed as written.

A candidate decides much of what kope prints: its error messages, tracebacks, kernel names, the lines
the gates quote. `sanitize` takes out what a terminal would obey rather than show (escape sequences,
other control characters, bidirectional overrides: `kope.text.sanitize`); every KopeConsole applies it
to all the text it renders, and the triage report to every value it writes into its page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich import errors
from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.syntax import Syntax

from kope.text import sanitize


class KopeConsole(Console):
    """A rich Console that shows no control characters from the text it renders, does not wrap lines when
    its output is not a terminal, and never turns `:name:` into an emoji (`openai:m:` stays as written)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def print(self, *objects: Any, **options: Any) -> None:
        if self.is_terminal:
            super().print(*objects, **options)
            return
        if options.get("soft_wrap") is None:
            options["soft_wrap"] = True
        widest = max((self._natural_width(o) for o in objects), default=0)
        if widest <= self.width:
            super().print(*objects, **options)
            return
        saved = self._width
        self.width = widest  # rich renders at most its own width: widen it for this table only
        try:
            super().print(*objects, **options)
        finally:
            self._width = saved

    def _natural_width(self, renderable: Any) -> int:
        """The width a table (or a group of them) needs to show every cell on one line (0 for plain text,
        which soft wrapping keeps whole already)."""
        if isinstance(renderable, str):
            return 0
        try:
            return Measurement.get(self, self.options.update(width=100_000), renderable).maximum
        except (errors.NotRenderableError, TypeError):
            return 0

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
