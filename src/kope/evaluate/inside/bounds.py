"""A bounds checker for Triton kernels in interpreter mode (runs inside the candidate worker).

Every load, store and atomic that its mask lets through is checked against the memory of the
tensors passed to that launch (each tensor's own extent: from its first to its last element, as
its shape and strides reach). A block of pointers belongs to the tensor most of its active lanes
fall in; a lane outside that tensor is out of bounds, even if it lands in another argument. Each
out-of-bounds access is recorded with the kernel's name, the source line, the program id and how
far out it is, and its lane is masked off, so the kernel goes on instead of reading garbage or
crashing.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from kope.protocol import BoundsEvent

_MAX_EVENTS = 50


@dataclass
class _Launch:
    kernel: str
    ranges: list[tuple[str, int, int]] = field(default_factory=list)


class BoundsChecker:
    def __init__(self, candidate_file: str) -> None:
        self.candidate_file = candidate_file
        self.launch: _Launch | None = None
        self.events: dict[tuple[str, int | None, str], BoundsEvent] = {}
        self.launches = 0

    def install(self) -> None:
        from triton.runtime import interpreter

        checker = self
        executor = interpreter.GridExecutor
        original_init_args = executor._init_args_hst

        @functools.wraps(original_init_args)
        def init_args(grid_executor: Any, args_dev: Any, kwargs: Any) -> Any:
            args_hst, kwargs_hst = original_init_args(grid_executor, args_dev, kwargs)
            names = list(getattr(grid_executor, "arg_names", []))
            launch = _Launch(kernel=getattr(grid_executor.fn, "__name__", "kernel"))
            for index, value in enumerate(list(args_hst) + list(kwargs_hst.values())):
                name = names[index] if index < len(names) else f"arg{index}"
                if index >= len(args_hst):
                    name = list(kwargs_hst)[index - len(args_hst)]
                for tensor in _tensors(value):
                    start, end = _extent(tensor)
                    launch.ranges.append((name, start, end))
            checker.launch = launch
            checker.launches += 1
            return args_hst, kwargs_hst

        executor._init_args_hst = init_args
        builder = interpreter.InterpreterBuilder
        original_load = builder.create_masked_load
        original_store = builder.create_masked_store
        original_rmw = builder.create_atomic_rmw

        @functools.wraps(original_load)
        def load(self: Any, ptrs: Any, mask: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
            return original_load(self, ptrs, checker.check(self, ptrs, mask, "load"), other, *args, **kwargs)

        @functools.wraps(original_store)
        def store(self: Any, ptrs: Any, value: Any, mask: Any, *args: Any, **kwargs: Any) -> Any:
            return original_store(self, ptrs, value, checker.check(self, ptrs, mask, "store"), *args, **kwargs)

        @functools.wraps(original_rmw)
        def rmw(self: Any, op: Any, ptr: Any, val: Any, mask: Any, *args: Any) -> Any:
            return original_rmw(self, op, ptr, val, checker.check(self, ptr, mask, "atomic"), *args)

        builder.create_masked_load = load
        builder.create_masked_store = store
        builder.create_atomic_rmw = rmw

    def check(self, builder: Any, ptrs: Any, mask: Any, kind: str) -> Any:
        launch = self.launch
        if launch is None or not launch.ranges:
            return mask
        addresses = np.asarray(ptrs.data, dtype=np.uint64).astype(np.int64)
        active = np.broadcast_to(mask_lanes(mask), addresses.shape)
        itemsize = _itemsize(ptrs)
        # A block of pointers derives from one tensor: the one most active lanes fall in. Lanes outside
        # it are out of bounds even when they land in another argument (a read past x into y).
        within = [(addresses >= start) & (addresses + itemsize <= end) for _, start, end in launch.ranges]
        counts = [int((active & hit).sum()) for hit in within]
        home = int(np.argmax(counts)) if max(counts) else None
        inside = within[home] if home is not None else np.zeros(addresses.shape, dtype=bool)
        outside = active & ~inside
        if not outside.any():
            return mask
        self._record(builder, launch, kind, addresses[outside], itemsize, home)
        safe = active & inside
        return safe if isinstance(mask, np.ndarray) else type(mask)(safe, mask.dtype)

    def _record(
        self, builder: Any, launch: _Launch, kind: str, bad: np.ndarray, itemsize: int, home: int | None
    ) -> None:
        ranges = [launch.ranges[home]] if home is not None else launch.ranges
        gaps = np.stack([np.where(bad < start, start - bad, bad + itemsize - end) for _, start, end in ranges])
        nearest_range = gaps.argmin(axis=0)
        distances = gaps.min(axis=0)
        farthest = int(distances.argmax())
        name, start, _ = ranges[int(nearest_range[farthest])]
        side = "before the start of" if int(bad[farthest]) < start else "past the end of"
        elements = max(1, -(-int(distances[farthest]) // itemsize))
        line = self._line()
        key = (launch.kernel, line, kind)
        event = self.events.get(key)
        if event is None:
            if len(self.events) >= _MAX_EVENTS:
                return
            self.events[key] = BoundsEvent(
                kernel=launch.kernel,
                line=line,
                kind=kind,
                pid=list(builder.grid_idx or (0, 0, 0)),
                lanes=int(bad.size),
                elements_out=elements,
                nearest=f"{side} {name}",
            )
            return
        event.count += 1
        event.lanes = max(event.lanes, int(bad.size))
        if elements > event.elements_out:
            event.elements_out, event.nearest = elements, f"{side} {name}"

    def _line(self) -> int | None:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.candidate_file:
                return frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return None

    def report(self) -> list[BoundsEvent]:
        return sorted(self.events.values(), key=lambda e: (e.kernel, e.line or 0, e.kind))


def mask_lanes(mask: Any) -> np.ndarray:
    """The truth values of an interpreted load's or store's mask, whichever form the interpreter holds it in: a
    handle over an array (a pointer block's mask, of booleans or of integers it loads where nonzero) or a bare
    array (a block pointer's `boundary_check`, built by `materialize_pointers`; its `.data` is a buffer)."""
    data = mask if isinstance(mask, np.ndarray) else mask.data
    return np.asarray(data).astype(bool, copy=False)


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    base = getattr(value, "base", None)
    if isinstance(base, torch.Tensor):
        return [base]
    if isinstance(value, tuple | list):
        return [t for item in value for t in _tensors(item)]
    return []


def _extent(tensor: torch.Tensor) -> tuple[int, int]:
    """The byte range [first, last + 1) a tensor's elements occupy, through its shape and strides."""
    base = tensor.data_ptr()
    if tensor.numel() == 0:
        return base, base
    size = tensor.element_size()
    reach = [(n - 1) * stride for n, stride in zip(tensor.shape, tensor.stride(), strict=True)]
    low = sum(r for r in reach if r < 0)
    high = sum(r for r in reach if r > 0)
    return base + low * size, base + (high + 1) * size


def _itemsize(ptrs: Any) -> int:
    try:
        element = ptrs.get_element_ty()
        return max(1, int(element.primitive_bitwidth) // 8)
    except Exception:
        return 1
