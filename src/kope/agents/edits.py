"""Read a model's reply: SEARCH/REPLACE blocks, or a whole file, or requests for instrumentation.

Reply formats (documented to the model in the prompt):

    <<<<<<< SEARCH
    lines copied exactly from the current kernel
    =======
    the lines that replace them
    >>>>>>> REPLACE

or the whole new file in one ```python block (it must define ModelNew), or instrumentation
requests on lines of their own, outside code blocks:

    TRACE kernel=<name> line=<n> pid=<x,y,z>
    PROBE bounds | PROBE sizes | PROBE determinism

A SEARCH text must occur exactly once; when it does not, lines are matched again ignoring trailing
whitespace and a uniform change of indentation. An edit that still does not apply is reported to
the model with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BLOCK = re.compile(
    r"^<{5,9} ?SEARCH[^\n]*\n(?P<search>.*?)^={5,9}[ \t]*\n(?P<replace>.*?)^>{5,9} ?REPLACE[^\n]*$",
    re.DOTALL | re.MULTILINE,
)
_FENCE = re.compile(r"^```[ \t]*(?:python|py)?[ \t]*\n(?P<code>.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_TRACE = re.compile(r"^\s*TRACE\s+kernel=(?P<kernel>\w+)\s+line=(?P<line>\d+)(?:\s+pid=(?P<pid>[\d,\s]+))?\s*$", re.M)
_PROBE = re.compile(r"^\s*PROBE\s+(?P<what>bounds|sizes|determinism)\s*$", re.M)


class EditError(Exception):
    """An edit that cannot be applied; the message says why, for the model."""


@dataclass(frozen=True)
class Block:
    search: str
    replace: str


@dataclass(frozen=True)
class Request:
    kind: str
    """trace, bounds, sizes or determinism"""
    kernel: str = ""
    line: int = 0
    pid: tuple[int, ...] = (0, 0, 0)


@dataclass
class ParsedReply:
    blocks: list[Block] = field(default_factory=list)
    whole_file: str | None = None
    requests: list[Request] = field(default_factory=list)

    @property
    def has_edit(self) -> bool:
        return bool(self.blocks) or self.whole_file is not None

    def apply(self, source: str) -> str:
        if self.whole_file is not None:
            return self.whole_file
        for index, block in enumerate(self.blocks, start=1):
            source = apply_block(source, block, index)
        return source


def parse_reply(text: str) -> ParsedReply:
    parsed = ParsedReply()
    for match in _BLOCK.finditer(text):
        parsed.blocks.append(Block(search=match.group("search"), replace=match.group("replace")))
    if not parsed.blocks:
        files = [m.group("code") for m in _FENCE.finditer(text) if "ModelNew" in m.group("code")]
        if files:
            parsed.whole_file = files[-1]
    outside = _FENCE.sub("", text)
    for match in _TRACE.finditer(outside):
        pid = tuple(int(p) for p in (match.group("pid") or "0").replace(" ", "").split(",") if p)
        parsed.requests.append(Request("trace", match.group("kernel"), int(match.group("line")), pid))
    for match in _PROBE.finditer(outside):
        parsed.requests.append(Request(match.group("what")))
    return parsed


def apply_block(source: str, block: Block, index: int = 1) -> str:
    search = block.search
    if not search.strip():
        raise EditError(f"block {index}: the SEARCH part is empty")
    count = source.count(search)
    if count == 1:
        return source.replace(search, block.replace, 1)
    if count > 1:
        raise EditError(f"block {index}: the SEARCH text occurs {count} times; include more lines to make it unique")
    inline = search.removesuffix("\n")
    if "\n" not in inline and inline.strip() and source.count(inline) == 1:
        return source.replace(inline, block.replace.removesuffix("\n"), 1)
    return _apply_loosely(source, block, index)


def _apply_loosely(source: str, block: Block, index: int) -> str:
    lines = source.splitlines(keepends=True)
    wanted = [line.rstrip() for line in block.search.splitlines()]
    while wanted and not wanted[-1]:
        wanted.pop()
    stripped_wanted = [line.strip() for line in wanted]
    matches: list[int] = []
    for start in range(len(lines) - len(wanted) + 1):
        window = [line.rstrip("\r\n").rstrip() for line in lines[start : start + len(wanted)]]
        if [line.strip() for line in window] == stripped_wanted and _uniform_shift(window, wanted) is not None:
            matches.append(start)
    if not matches:
        raise EditError(
            f"block {index}: the SEARCH text is not in the current kernel; copy the lines exactly as they are"
        )
    if len(matches) > 1:
        raise EditError(f"block {index}: the SEARCH text matches {len(matches)} places; include more lines")
    start = matches[0]
    window = [line.rstrip("\r\n").rstrip() for line in lines[start : start + len(wanted)]]
    shift = _uniform_shift(window, wanted) or ""
    replacement = [
        (_reindent(line, shift) if line.strip() else line.rstrip()) + "\n" for line in block.replace.splitlines()
    ]
    return "".join(lines[:start] + replacement + lines[start + len(wanted) :])


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _uniform_shift(actual: list[str], wanted: list[str]) -> str | None:
    """The indentation to add to `wanted` so it equals `actual` (None when the shift is not uniform)."""
    shift: str | None = None
    for have, want in zip(actual, wanted, strict=True):
        if not have.strip():
            continue
        have_indent, want_indent = _indent(have), _indent(want)
        if not have_indent.endswith(want_indent) and want_indent:
            return None
        extra = have_indent[: len(have_indent) - len(want_indent)] if want_indent else have_indent
        if shift is None:
            shift = extra
        elif shift != extra:
            return None
    return shift if shift is not None else ""


def _reindent(line: str, shift: str) -> str:
    return shift + line.rstrip()
