"""Low signal: an output of the reference that a copy or a constant kernel would match, and the derived
cases marked so that copies are judged on the widened ones (`kope.cases.derive`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kope.cases.derivation import Derivation
from kope.cases.task import Case
from kope.cases.tolerance import Tolerance, tolerance_for
from kope.protocol.probing import OutputSignal


def quiet_output(signal: OutputSignal, tolerances: Mapping[str, Tolerance] | None = None) -> str | None:
    """Why a copy or a constant kernel would match this output of the reference (None: it would not).

    Equal to an input: every element within the dtype's `atol`. Constant (two elements or more): its
    values span at most twice `atol`, so their midpoint is within `atol` of each. Near zero: every
    element within `atol` of 0, so a kernel that writes zeros passes."""
    atol = tolerance_for(signal.dtype, tolerances).atol
    name = f"output {signal.output}"
    if signal.input_error is not None and signal.input_error <= atol:
        return f"{name} equals input {signal.input_index} (max difference {signal.input_error:.3g})"
    if signal.max_abs <= atol:
        return f"{name} is below the tolerance (max |y| = {signal.max_abs:.3g} <= atol {atol:g})"
    if signal.numel > 1 and signal.spread <= 2 * atol:
        return f"{name} is constant (its values span {signal.spread:.3g})"
    return None


def mark_low_signal(cases: Sequence[Case], derivation: Derivation) -> list[Case]:
    """Derived cases, with the visible one marked low-signal and the widened ones marked as such, when the
    derivation found the task low-signal and kept a widened case (copies are then judged there)."""
    low = derivation.low_signal
    if low is None or not low.extra_cases:
        return list(cases)
    transforms = [c.inputs for c in derivation.kept if c.kind == "widened" and c.inputs is not None]
    marked: list[Case] = []
    for case in cases:
        if case.inputs is not None and case.inputs in transforms:
            case = replace(case, widened=True)
        elif case.visible:
            case = replace(case, low_signal=low.reason)
        marked.append(case)
    return marked
