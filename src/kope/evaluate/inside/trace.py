"""Trace a Triton kernel in interpreter mode: the values of its local variables at one line, for one
program (runs inside the candidate worker)."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import numpy as np

from kope.protocol import TraceHit, TraceSpec

_MAX_HITS = 16
_MAX_VALUES = 64


class Tracer:
    """Records locals when kernel `spec.kernel` reaches `spec.line` in program `spec.pid`."""

    def __init__(self, candidate_file: str, spec: TraceSpec) -> None:
        self.candidate_file = candidate_file
        self.spec = spec
        self.hits: list[TraceHit] = []
        self.reached_kernel = False

    def install(self) -> None:
        sys.settrace(self._global)

    def uninstall(self) -> None:
        sys.settrace(None)

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        if (
            event == "call"
            and frame.f_code.co_filename == self.candidate_file
            and frame.f_code.co_name == self.spec.kernel
        ):
            self.reached_kernel = True
            return self._local
        return None

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_lineno == self.spec.line and len(self.hits) < _MAX_HITS:
            pid = _program_id()
            if pid is not None and list(pid[: len(self.spec.pid)]) == list(self.spec.pid):
                self.hits.append(
                    TraceHit(
                        pid=list(pid),
                        variables={
                            name: describe(value) for name, value in frame.f_locals.items() if not name.startswith("__")
                        },
                    )
                )
        return self._local


def _program_id() -> tuple[int, int, int] | None:
    try:
        from triton.runtime.interpreter import interpreter_builder
    except ImportError:
        return None
    return getattr(interpreter_builder, "grid_idx", None)


def describe(value: Any) -> str:
    """A readable rendering of a kernel-local value (Triton tensors become their numpy values).

    Blocks show their first and last 16 values; masks say how many lanes are on; numbers their range.
    """
    handle = getattr(value, "handle", None)
    data = getattr(handle, "data", None)
    if isinstance(data, np.ndarray):
        shape = [int(getattr(n, "value", n)) for n in (getattr(value, "shape", None) or data.shape)]
        dtype = getattr(value, "dtype", data.dtype)
        flat = data.reshape(-1)
        shown = np.array2string(flat, threshold=_MAX_VALUES, edgeitems=16, precision=6, separator=", ")
        if getattr(dtype, "is_ptr", lambda: False)():
            return f"pointer block {shape}: {shown}"
        if data.dtype == np.bool_:
            return f"mask {shape}: {int(flat.sum())} of {flat.size} lanes on: {shown}"
        if flat.size > 1 and np.issubdtype(data.dtype, np.number):
            with np.errstate(invalid="ignore"):
                return f"{dtype} {shape}, min {np.nanmin(flat):.6g}, max {np.nanmax(flat):.6g}: {shown}"
        return f"{dtype} {shape}: {shown}"
    if hasattr(value, "value") and type(value).__name__ == "constexpr":
        return f"constexpr {value.value!r}"
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."
