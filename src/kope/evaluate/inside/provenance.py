"""Run-time provenance of memory in the candidate's process: where each byte's value came from.

A *label* says, for a span of memory, which task inputs its value derives from, whether a computing
kernel of the candidate is on its path, whether a kernel only copied it, whether PyTorch computed it
(in forward, or in `__init__`), whether it was built from host data, or whether it is a fill
(`empty`, `zeros`, `arange`...). The shadow map holds labels by address range; kernel launches,
PyTorch calls and host reads update and consult it (`kope.evaluate.inside.monitor`).

The judgement of a kernel store: it *copies* when the values it stores are, as a multiset, exactly
the values of one load of the same launch (a copy, a permutation, a transpose); then the stored
memory keeps that load's label. Otherwise it *computes*: the stored memory gets the union of every
label the launch has read so far, and is marked as kernel-computed when those labels reach a task
input. A kernel that reads no task input therefore never marks anything as kernel-computed.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import torch

_EMPTY: frozenset[Any] = frozenset()


@dataclass(frozen=True)
class Label:
    inputs: frozenset[int] = _EMPTY
    """Task inputs (positional index) the value derives from."""
    kernel: bool = False
    """A computing kernel of the candidate, reading task-input-derived data, is on its path."""
    copied: bool = False
    """A kernel of the candidate copied it (and did not compute it)."""
    torch_ops: frozenset[str] = _EMPTY
    """PyTorch compute operations in forward on its path."""
    init_ops: frozenset[str] = _EMPTY
    """PyTorch compute operations in `__init__` on its path."""
    host: bool = False
    """Built from Python / host data during forward."""
    fill: bool = False
    """A fill, a constant or a parameter initialisation: no data."""
    state: bool = False
    """The model's parameters and buffers (copied from the reference where names agree)."""
    unknown: bool = False
    """Memory no tracked kernel, PyTorch call or allocation wrote."""
    moves: frozenset[str] = _EMPTY
    """PyTorch moving task data on its path: a rearrangement (`policy.REARRANGES`: flip, cat, pad...), advanced
    indexing, an assignment or a copy into another tensor. No compute, but when the task itself only moves data,
    PyTorch did the task."""

    def union(self, other: Label) -> Label:
        if self == other:
            return self
        return Label(
            inputs=self.inputs | other.inputs,
            kernel=self.kernel or other.kernel,
            copied=self.copied or other.copied,
            torch_ops=self.torch_ops | other.torch_ops,
            init_ops=self.init_ops | other.init_ops,
            host=self.host or other.host,
            fill=self.fill and other.fill,
            state=self.state or other.state,
            unknown=self.unknown or other.unknown,
            moves=self.moves | other.moves,
        )

    def computed_by_kernel(self) -> Label:
        return replace(self, kernel=self.kernel or bool(self.inputs), copied=False, fill=False, unknown=False)

    def copied_by_kernel(self) -> Label:
        return replace(self, copied=True)

    def moved_by_torch(self, op: str) -> Label:
        return replace(self, moves=self.moves | {op})

    def computed_by_torch(self, op: str) -> Label:
        return replace(self, torch_ops=self.torch_ops | {op}, fill=False, unknown=False)


UNKNOWN = Label(unknown=True)
FILL = Label(fill=True)
HOST = Label(host=True)
STATE = Label(state=True)


def union(labels: list[Label]) -> Label:
    if not labels:
        return FILL
    result = labels[0]
    for label in labels[1:]:
        result = result.union(label)
    return result


def span(tensor: torch.Tensor) -> tuple[int, int]:
    """The bytes a tensor's elements span, from its lowest to its highest element."""
    with torch._C.DisableTorchFunctionSubclass():
        start = int(tensor.data_ptr())
        if tensor.numel() == 0:
            return start, start
        size = tensor.element_size()
        low = sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride(), strict=True) if s < 0)
        high = sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride(), strict=True) if s > 0)
        return start + low * size, start + (high + 1) * size


def _repeats(addresses: Any) -> bool:
    """Whether some address occurs twice: one pass when they run in order (most stores), else a sort
    (`numpy.unique` costs a lazy import of `numpy.ma` at its first call, 10 ms of every candidate job)."""
    import numpy

    flat = addresses.reshape(-1)
    if flat.size < 2:
        return False
    steps = numpy.diff(flat.astype(numpy.int64, copy=False))
    if bool((steps > 0).all()) or bool((steps < 0).all()):
        return False
    ordered = numpy.sort(flat)
    return bool((ordered[1:] == ordered[:-1]).any())


@dataclass
class Shadow:
    """Non-overlapping labelled address ranges, sorted by start; later writes replace earlier ones."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    stored: list[tuple[int, int, Any, Any]] = field(default_factory=list)
    """What kernel stores (interpreter) left in memory that nothing tracked has written since: (start, end,
    addresses, values). Memory that no longer holds those values was written by something no hook sees."""

    def clear(self) -> None:
        self.starts.clear()
        self.ends.clear()
        self.labels.clear()
        self.stored.clear()

    def write(self, start: int, end: int, label: Label) -> None:
        if end <= start:
            return
        if self.stored:
            self._forget(start, end)
        i = bisect.bisect_right(self.ends, start)
        j = i
        while j < len(self.starts) and self.starts[j] < end:
            j += 1
        pieces: list[tuple[int, int, Label]] = []
        if i < j and self.starts[i] < start:
            pieces.append((self.starts[i], start, self.labels[i]))
        pieces.append((start, end, label))
        if i < j and self.ends[j - 1] > end:
            pieces.append((end, self.ends[j - 1], self.labels[j - 1]))
        if i > 0 and self.ends[i - 1] == pieces[0][0] and self.labels[i - 1] == pieces[0][2]:
            i -= 1
            pieces[0] = (self.starts[i], pieces[0][1], pieces[0][2])
        if j < len(self.starts) and self.starts[j] == pieces[-1][1] and self.labels[j] == pieces[-1][2]:
            pieces[-1] = (pieces[-1][0], self.ends[j], pieces[-1][2])
            j += 1
        self.starts[i:j] = [p[0] for p in pieces]
        self.ends[i:j] = [p[1] for p in pieces]
        self.labels[i:j] = [p[2] for p in pieces]

    def _forget(self, start: int, end: int) -> None:
        self.stored = [entry for entry in self.stored if entry[1] <= start or end <= entry[0]]

    def expect(self, addresses: Any, values: Any) -> None:
        """A kernel store left `values` (a NumPy array, one per lane) at `addresses` (byte addresses, uint64):
        call it once the launch's labels are written. Stores whose lanes share an address are not kept (which
        lane wins is the interpreter's business), nor are stores beyond `MAX_STORED` (the oldest go first)."""
        import numpy

        if not addresses.size or _repeats(addresses):
            return
        end = int(addresses.max()) + values.dtype.itemsize
        start = int(addresses.min())
        self._forget(start, end)
        self.stored.append((start, end, addresses.copy(), numpy.array(values, copy=True)))
        if len(self.stored) > MAX_STORED:
            del self.stored[0]

    def changed(self, tensor: torch.Tensor) -> bool:
        """Whether some memory of `tensor` (on the CPU) no longer holds what a kernel stored there, though no
        tracked kernel, PyTorch call or host read has written it since: a write through a view by address
        (`__array_interface__`, ctypes, `/proc/self/mem`)."""
        import numpy

        with torch._C.DisableTorchFunctionSubclass():
            if tensor.device.type != "cpu" or not self.stored:
                return False
            storage = tensor.untyped_storage()
            base, size = int(storage.data_ptr()), int(storage.nbytes())
            if not size:
                return False
            memory = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (size,), (1,)).numpy()
        for start, end, addresses, values in self.stored:
            if end <= base or base + size <= start:
                continue
            width = values.dtype.itemsize
            inside = (addresses >= base) & (addresses + width <= base + size)
            if not inside.any():
                continue
            offsets = (addresses[inside] - base).astype(numpy.int64)
            now = memory[offsets[:, None] + numpy.arange(width)]
            then = numpy.ascontiguousarray(values.reshape(-1)[inside]).view(numpy.uint8).reshape(-1, width)
            if not numpy.array_equal(now, then):
                return True
        return False

    def read(self, start: int, end: int) -> list[tuple[int, int, Label]]:
        """The labelled pieces of [start, end); gaps come back as UNKNOWN."""
        if end <= start:
            return []
        pieces: list[tuple[int, int, Label]] = []
        cursor = start
        i = bisect.bisect_right(self.ends, start)
        while i < len(self.starts) and self.starts[i] < end:
            s, e = max(self.starts[i], start), min(self.ends[i], end)
            if s > cursor:
                pieces.append((cursor, s, UNKNOWN))
            pieces.append((s, e, self.labels[i]))
            cursor = e
            i += 1
        if cursor < end:
            pieces.append((cursor, end, UNKNOWN))
        return pieces

    def label(self, start: int, end: int) -> Label:
        return union([label for _, _, label in self.read(start, end)])

    def tensor_label(self, tensor: torch.Tensor) -> Label:
        return self.label(*span(tensor))

    def snapshot(self) -> list[tuple[int, int, Label]]:
        return list(zip(self.starts, self.ends, self.labels, strict=True))


MAX_STORED = 4096
"""How many kernel stores `Shadow.expect` keeps per forward call."""

MIN_COPY_LANES = 4
"""A launch that stored fewer lanes than this is never judged a copy: one or two values equal to a
loaded one are as likely a coincidence (a truncated loss equal to a class index) as a copy."""


@dataclass
class LaunchState:
    """What one launch of a candidate kernel has read and written so far (interpreter)."""

    name: str
    read: Label = FILL
    recent: deque[tuple[Any, Label]] = field(default_factory=lambda: deque(maxlen=8))
    elements: int = 0
    computed: bool = False
    stored: bool = False
    stores: list[tuple[int, int, Label | None]] = field(default_factory=list)
    """Each store's range and, when it stored exactly one load's values, that load's label."""
    lanes: int = 0
    loaded_any: bool = False
    tolerance: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """Per dtype, the (atol, rtol) within which a store of one load's values is still a copy."""
    contents: list[tuple[Any, Any]] | None = field(default_factory=list)
    """Each store's lane addresses and values, for `Shadow.expect` once the launch ends; None after an atomic
    (whose result the interpreter computes, not the stored values)."""

    def note_load(self, values: Any, label: Label) -> None:
        import numpy

        self.read = label if not self.loaded_any else self.read.union(label)
        self.loaded_any = True
        self.elements += int(values.size)
        self.recent.append((numpy.sort(values, axis=None), label))

    def store_label(self, start: int, end: int, values: Any) -> Label:
        """The provisional label of memory this launch stores `values` to: a copy keeps its source's label."""
        import numpy

        self.elements += int(values.size)
        self.lanes += int(values.size)
        self.stored = True
        ordered = numpy.sort(values, axis=None)
        for loaded, label in reversed(self.recent):
            if loaded.shape == ordered.shape and _close(loaded, ordered, self.tolerance):
                self.stores.append((start, end, label))
                return label.copied_by_kernel()
        self.stores.append((start, end, None))
        self.computed = self.computed or bool(self.read.inputs)
        return self.read.computed_by_kernel()

    def finish(self) -> list[tuple[int, int, Label]]:
        """Relabel at the end of the launch: a launch computes unless every store was a copy (of enough
        lanes to tell); a gather from the model's own parameters indexed by task inputs (an embedding)
        computes too. What a computing launch stored carries everything it read."""
        sources = [label for _, _, label in self.stores if label is not None]
        all_copies = len(sources) == len(self.stores) and self.lanes >= MIN_COPY_LANES
        gather = all_copies and bool(self.read.inputs) and all(_pure_state(label) for label in sources)
        if all_copies and not gather:
            return []
        self.computed = self.computed or bool(self.read.inputs)
        final = self.read.computed_by_kernel()
        return [(start, end, final) for start, end, _ in self.stores]


def _pure_state(label: Label) -> bool:
    return label.state and not (label.inputs or label.host or label.torch_ops or label.init_ops or label.unknown)


def _within(a: Any, b: Any, atol: float, rtol: float) -> bool:
    """The one closeness rule of copy judgement, for numpy arrays and torch tensors alike: every `b` within
    `atol + rtol * |a|` of its `a`, or both NaN, or equal (infinities). `a` and `b` are float64, paired already."""
    near = (abs(b - a) <= atol + rtol * abs(a)) | ((a != a) & (b != b)) | (a == b)
    return bool(near.all())


def _close(loaded: Any, stored: Any, tolerance: Mapping[str, tuple[float, float]]) -> bool:
    """Whether two sorted arrays hold the same multiset of values: exactly, or (floating stores) within the
    stored dtype's tolerance, whatever dtype the values were loaded as. Sorted, the pairing of two multisets
    that minimises the largest difference is position by position."""
    import numpy

    if loaded.dtype == stored.dtype and numpy.array_equal(loaded, stored, equal_nan=stored.dtype.kind == "f"):
        return True
    atol, rtol = tolerance.get(stored.dtype.name, (0.0, 0.0))
    if stored.dtype.kind != "f" or loaded.dtype.kind != "f" or not (atol or rtol):
        return False
    with numpy.errstate(invalid="ignore"):
        return _within(loaded.astype(numpy.float64), stored.astype(numpy.float64), atol, rtol)


def tensor_copies(
    written: torch.Tensor, sources: list[torch.Tensor], tolerance: Mapping[str, tuple[float, float]] | None = None
) -> torch.Tensor | None:
    """The source whose values `written` holds as a multiset (a copy, a permutation), if any: exactly, or within
    the written dtype's tolerance (as `_close`, on the tensors' own device)."""
    with torch._C.DisableTorchFunctionSubclass():
        if written.numel() == 0:
            return None
        mine = written.detach().reshape(-1).sort().values
        atol, rtol = (tolerance or {}).get(str(written.dtype).removeprefix("torch."), (0.0, 0.0))
        for source in sources:
            if source.numel() != written.numel() or source is written:
                continue
            theirs = source.detach().reshape(-1).sort().values
            if source.dtype == written.dtype and (
                bool(torch.equal(mine, theirs))
                or (mine.is_floating_point() and bool(((mine == theirs) | (mine.isnan() & theirs.isnan())).all()))
            ):
                return source
            if not (mine.is_floating_point() and theirs.is_floating_point() and (atol or rtol)):
                continue
            if _within(theirs.double(), mine.double(), atol, rtol):
                return source
    return None
