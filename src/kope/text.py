"""Text that untrusted code wrote, made safe to show: the one sanitiser kope's terminal output
(`kope.console.KopeConsole`) and its HTML report (`kope.triage.report`) both use.

    sanitize("boom\x1b[2J\x1b]0;pwned\x07!")  ->  "boom!"
"""

from __future__ import annotations

import re

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
