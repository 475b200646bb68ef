"""What each tracked tensor's memory held when a tracked writer last touched it (under the interpreter).

Provenance (`kope.evaluate.inside.provenance`) labels memory by who wrote it: a kernel store, a PyTorch call, a
fill, a task input. A write that no hook sees (NumPy through an `__array_interface__` view of `data_ptr()`,
ctypes, `/proc/self/mem`) leaves the label as it was: a zeroed buffer that NumPy filled with the answer is still
a "fill" to the shadow map, and a kernel that reads it and adds `0 * x` looks like a kernel computing from the
input. So the memory itself is kept: after every tracked write (a PyTorch call, a kernel launch, the inputs and
parameters at the start of forward) the storages it touched are copied, and before every tracked read (a PyTorch
call's or a launch's tensor arguments) they are compared with the copy. Memory that changed in between was
written by something no hook sees.

Only under the interpreter, where kope sees every store a kernel makes: on a GPU a launch writes memory no hook
reads back. Each entry holds a reference to its storage, so that the allocator cannot give its memory to another
tensor while kope still compares it; the copies are capped at `MAX_BYTES` (the oldest go first), and a storage
that was resized or swapped since is not compared.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import torch

MAX_BYTES = 128 * 1024 * 1024
"""The most bytes of copies kept per forward call."""


def _view(storage: Any, size: int) -> torch.Tensor:
    """The storage's bytes as a tensor of the widest integer type that divides them (a PyTorch view: `.numpy()`
    would make the storage unresizable for the candidate; the widest type compares about four times faster)."""
    dtype, width = next((d, w) for d, w in _WORDS if size % w == 0)
    with torch._C.DisableTorchFunction():
        return torch.empty(0, dtype=dtype).set_(storage, 0, (size // width,), (1,))


_WORDS = ((torch.int64, 8), (torch.int32, 4), (torch.uint8, 1))


def _copy(storage: Any, size: int) -> torch.Tensor:
    with torch._C.DisableTorchFunction():
        return _view(storage, size).clone()


@dataclass
class _Entry:
    storage: Any
    """The storage (held: its memory is not reused while the entry lives)."""
    size: int
    copy: torch.Tensor


@dataclass
class Contents:
    """Copies of tracked storages, by base address (see the module docstring)."""

    entries: dict[int, _Entry] = field(default_factory=dict)
    held: int = 0

    def clear(self) -> None:
        self.entries.clear()
        self.held = 0

    def note(self, tensor: torch.Tensor) -> int | None:
        """`tensor`'s storage was just written by a tracked writer (or handed over by kope): keep what it holds.
        Returns the storage's base address (None: not kept)."""
        with torch._C.DisableTorchFunctionSubclass():
            if tensor.device.type != "cpu":
                return None
            storage = tensor.untyped_storage()
            base, size = int(storage.data_ptr()), int(storage.nbytes())
        if not size or size > MAX_BYTES:
            return None
        old = self.entries.pop(base, None)
        if old is not None:
            self.held -= old.size
        self.entries[base] = _Entry(storage, size, _copy(storage, size))
        self.held += size
        while self.held > MAX_BYTES:
            oldest = next(iter(self.entries))
            self.held -= self.entries.pop(oldest).size
        return base

    def note_ranges(self, ranges: list[tuple[int, int]], skip: set[int] | None = None) -> None:
        """A launch stored into `ranges` (byte [start, end) pairs): refresh, once each, the kept storages they
        touch, but those in `skip` (already noted). A store beyond its own tensor is a bug of the kernel's, not a
        write no hook sees."""
        if not ranges or not self.entries:
            return
        ranges = sorted(ranges)
        starts = [start for start, _ in ranges]
        reach: list[int] = []  # reach[i]: the furthest end among ranges[: i + 1]
        for _, end in ranges:
            reach.append(max(end, reach[-1]) if reach else end)
        for base, entry in list(self.entries.items()):
            if skip and base in skip:
                continue
            before = bisect.bisect_left(starts, base + entry.size)  # ranges that start before the storage ends
            if before and reach[before - 1] > base:
                self._refresh(base, entry)

    def _refresh(self, base: int, entry: _Entry) -> None:
        if int(entry.storage.data_ptr()) == base and int(entry.storage.nbytes()) == entry.size:
            entry.copy = _copy(entry.storage, entry.size)
        else:
            self.held -= self.entries.pop(base).size

    def changed(self, tensor: torch.Tensor) -> bool:
        """Whether `tensor`'s storage holds other bytes than when a tracked writer last touched it."""
        with torch._C.DisableTorchFunctionSubclass():
            if tensor.device.type != "cpu":
                return False
            storage = tensor.untyped_storage()
            base, size = int(storage.data_ptr()), int(storage.nbytes())
        entry = self.entries.get(base)
        if entry is None or entry.size != size:
            return False
        if int(entry.storage.data_ptr()) != base or int(entry.storage.nbytes()) != size:
            return False
        with torch._C.DisableTorchFunction():
            return not torch.equal(_view(storage, size), entry.copy)
