"""Trace a Triton kernel in interpreter mode: the values of its local variables at one line, for one
program (runs inside the candidate worker)."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import numpy as np

from kope.evaluate.protocol import TraceHit, TraceSpec

_MAX_HITS = 16
_MAX_VALUES = 256


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
        if event == "call" and frame.f_code.co_filename == self.candidate_file and frame.f_code.co_name == self.spec.kernel:
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
                        variables={name: describe(value) for name, value in frame.f_locals.items()
                                   if not name.startswith("__")},
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
    """A readable rendering of a kernel-local value (Triton tensors become their numpy values)."""
    handle = getattr(value, "handle", None)
    data = getattr(handle, "data", None)
    if isinstance(data, np.ndarray):
        shape = getattr(value, "shape", None) or list(data.shape)
        dtype = getattr(value, "dtype", data.dtype)
        flat = data.reshape(-1)
        shown = np.array2string(flat[:_MAX_VALUES], threshold=_MAX_VALUES, precision=6, separator=", ")
        more = f" ... ({flat.size} values)" if flat.size > _MAX_VALUES else ""
        if getattr(dtype, "is_ptr", lambda: False)():
            return f"pointer block {list(shape)}: {shown}{more}"
        return f"{dtype} {list(shape)}: {shown}{more}"
    if hasattr(value, "value") and type(value).__name__ == "constexpr":
        return f"constexpr {value.value!r}"
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."
