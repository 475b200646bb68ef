"""Cues of constants: near misses of well-known constants, exp2 without log2(e)."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

from kope.knowledge.cues._registry import Source, cue

KNOWN_CONSTANTS: dict[str, float] = {
    "GELU tanh cubic coefficient": 0.044715,
    "sqrt(2/pi)": math.sqrt(2 / math.pi),
    "log2(e)": math.log2(math.e),
    "ln(2)": math.log(2),
    "1/sqrt(2)": 1 / math.sqrt(2),
    "sqrt(2)": math.sqrt(2),
    "pi": math.pi,
    "e": math.e,
    "1/pi": 1 / math.pi,
    "sqrt(2*pi)": math.sqrt(2 * math.pi),
    "1/sqrt(2*pi)": 1 / math.sqrt(2 * math.pi),
    "2/sqrt(pi)": 2 / math.sqrt(math.pi),
    "sigmoid-GELU coefficient": 1.702,
    "SELU scale": 1.0507009873554805,
    "SELU alpha": 1.6732632423543772,
}


def _significant(text: str) -> str:
    digits = text.lower().split("e")[0].replace(".", "").replace("-", "").lstrip("0")
    return digits.rstrip("0") or "0"


def near_constant(value: float, text: str) -> str | None:
    """The known constant a literal looks like a slip of (wrong decimal place, a mistyped digit)."""
    if value <= 0 or not math.isfinite(value):
        return None
    digits = _significant(text)
    if len(digits) < 3:
        return None
    for constant in KNOWN_CONSTANTS.values():
        if math.isclose(
            value, constant, rel_tol=0, abs_tol=0.51 * 10 ** (math.floor(math.log10(value)) - len(digits) + 1)
        ):
            return None
    for name, constant in KNOWN_CONSTANTS.items():
        reference = _significant(repr(constant))
        ratio = value / constant
        decade = round(math.log10(ratio))
        if decade != 0 and abs(ratio / 10**decade - 1) < 10 ** (1 - len(digits)):
            return name
        if decade == 0 and abs(ratio - 1) < 0.2 and _digit_slip(digits, reference[: len(digits) + 1]):
            return name
    return None


def _digit_slip(digits: str, reference: str) -> bool:
    """One digit changed, dropped, added, or two adjacent digits swapped."""
    a, b = digits, reference[: len(digits)]
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        if len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]:
            return True
    longer = reference[: len(digits) + 1]
    return any(longer[:i] + longer[i + 1 :] == a for i in range(len(longer))) or any(
        a[:i] + a[i + 1 :] == reference[: len(digits) - 1] for i in range(len(a))
    )


@cue("suspicious-constant", "a float literal close to a well-known constant but not equal to it (0.44715, 0.7978...)")
def suspicious_constant(source: Source) -> Iterator[ast.AST]:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            text = ast.get_source_segment(source.text, node) or repr(node.value)
            if near_constant(node.value, text) is not None:
                yield node


@cue("exp2-without-log2e", "tl.exp2 is used but no log2(e) factor appears: the softmax runs at base 2, not e")
def exp2_without_log2e(source: Source) -> Iterator[ast.AST]:
    text = source.text.lower().replace("_", "")
    if any(marker in text for marker in ("1.44269", "log2(math.e)", "log2e", "0.693147", "log(2", "ln2")):
        return
    yield from source.kernel_calls("exp2")
