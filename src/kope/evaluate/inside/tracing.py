"""What the candidate's code does, recorded in its process: its PyTorch calls, its kernels' launches, loads and
stores, its host reads, and where every byte the candidate writes came from (provenance: `provenance.Label`).

`Tracer` holds the record; `kope.evaluate.inside.hooks` attaches it to Triton, extensions and PyTorch, and
`Recorder` (a `TorchFunctionMode`) feeds it the PyTorch calls of forward. The monitor
(`kope.evaluate.inside.monitor`) is a tracer that also installs the hooks, checks each forward and reports.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from kope.evaluate.inside.bounds import mask_lanes
from kope.evaluate.inside.contents import Contents
from kope.evaluate.inside.outputs import same_bits, storage_range
from kope.evaluate.inside.provenance import (
    FILL,
    HOST,
    STATE,
    Label,
    LaunchState,
    Shadow,
    span,
    tensor_copies,
    union,
)
from kope.protocol import HostEvent, Observations, Provenance, TorchCall, policy

_getframe = sys._getframe


class Tracer:
    """The record of what the candidate's code did, and the methods the hooks and the recorder call to add to it."""

    def __init__(
        self,
        candidate_file: str,
        extra_allow: frozenset[str] = frozenset(),
        copy_tolerance: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        self.candidate_file = candidate_file
        self.copy_tolerance = dict(copy_tolerance or {})
        """Per dtype, how close to a load a store may be and still be a copy (`IntegritySpec.copy_tolerance`)."""
        self.extra_allow = extra_allow
        self.launch_depth = 0
        self.threads_before = threading.active_count()
        """Threads of the worker before the candidate's code ran (the monitor counts them again when installed)."""
        self.ghost = False
        self.launches = 0
        self.kernels: dict[str, int] = {}
        self.observations = Observations()
        self._calls: dict[tuple[str, int | None], int] = {}
        self._body_calls: dict[tuple[str, int | None], int] = {}
        self._casts: dict[tuple[str, int | None], int] = {}
        self._references: dict[tuple[str, int | None], int] = {}
        self._stores: list[tuple[int, int]] = []
        self._fills: list[tuple[int, int]] = []
        self.interpreted = False
        self.phase: str | None = None
        """None, "init" (ModelNew's construction) or "forward"."""
        self.tracking = False
        self.shadow = Shadow()
        self.contents = Contents()
        """Under the interpreter: what tracked memory held when a tracked writer last touched it."""
        self._state: list[torch.Tensor] = []
        self._persistent: list[tuple[int, int, Label]] = []
        self._built: dict[str, Label] = {}
        self.launch: LaunchState | None = None
        self.storage_reading = 0
        self.provenance = Provenance(method="interpreter" if os.environ.get("TRITON_INTERPRET") == "1" else "arguments")
        self._events: dict[tuple[str, str, int | None], TorchCall | HostEvent] = {}
        self._torch_elements = 0
        self._kernel_elements = 0

    def traced_launch(self, name: str, original: Callable[..., Any], kernel: Any, args: Any, kwargs: Any) -> Any:
        """One launch of a candidate kernel with provenance: loads and stores under the interpreter,
        the tensor arguments' contents before and after elsewhere."""
        arguments = [t for t in _tensors((args, kwargs)) if t.numel()] if not self.interpreted else []
        with self._own_calls():
            before = [t.detach().clone() for t in arguments]
        self.launch = LaunchState(name, tolerance=self.copy_tolerance) if self.interpreted else None
        threads = threading.active_count() - self.threads_before
        self.observations.threads_in_launch = max(self.observations.threads_in_launch, threads)
        if self.interpreted:
            self.check_reads(f"kernel `{name}`", (args, kwargs))
        self.launch_depth += 1
        try:
            return original(kernel, *args, **kwargs)
        finally:
            self.launch_depth -= 1
            state, self.launch = self.launch, None
            if state is not None:
                written = list(state.finish())
                for start, end, label in written:
                    self.shadow.write(start, end, label)
                noted = self.note_writes((args, kwargs))
                with self._own_calls():
                    self.contents.note_ranges([(start, end) for start, end, _ in written], noted)
                for addresses, values in state.contents or ():
                    self.shadow.expect(addresses, values)
                self._kernel_elements += state.elements
                if not state.computed and state.stored:
                    self._event("copy", name, None)
            else:
                with self._own_calls():
                    self._compare_arguments(name, arguments, before)

    @contextlib.contextmanager
    def _own_calls(self) -> Iterator[None]:
        """The monitor's own PyTorch calls (copies, comparisons) are not the candidate's: the recorder
        ignores calls made at a launch depth above zero from files other than the candidate's."""
        self.launch_depth += 1
        try:
            yield
        finally:
            self.launch_depth -= 1

    def traced_extension(self, name: str, function: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """A call into a compiled extension: its arguments before and after, what it returned, and the
        ATen operations it called back into (those are PyTorch's work, not the extension's)."""
        arguments = [t for t in _tensors((args, kwargs)) if t.numel()]
        with self._own_calls():
            before = [t.detach().clone() for t in arguments]
        aten = _AtenRecorder()
        self.launch_depth += 1
        try:
            with aten:
                result = function(*args, **kwargs)
        finally:
            self.launch_depth -= 1
        line = self._candidate_line()
        for op in aten.ops:
            self._event("extension", op, line)
        fresh = [t for t in _tensors(result) if t.numel() and all(t is not a for a in arguments)]
        with self._own_calls():
            self._compare_arguments(name, arguments + fresh, before + [None] * len(fresh), torch_ops=aten.ops)
        return result

    def _compare_arguments(
        self,
        name: str,
        arguments: list[torch.Tensor],
        before: Sequence[torch.Tensor | None],
        torch_ops: list[str] | None = None,
    ) -> None:
        """Without the interpreter: a launch read its tensor arguments and wrote those that changed.
        A written tensor holding exactly the values of another argument is a copy of it."""
        if any(t.is_cuda for t in arguments):
            torch.cuda.synchronize()
        with torch._C.DisableTorchFunctionSubclass():
            read = union([self.shadow.tensor_label(t) for t, b in zip(arguments, before, strict=True) if b is not None])
            written = [t for t, b in zip(arguments, before, strict=True) if b is None or not same_bits(t, b)]
            self._kernel_elements += sum(t.numel() for t in arguments)
            computed = False
            for tensor in written:
                source = tensor_copies(
                    tensor,
                    [b for t, b in zip(arguments, before, strict=True) if b is not None and t is not tensor],
                    self.copy_tolerance,
                )
                if source is not None:
                    original = arguments[next(i for i, b in enumerate(before) if b is source)]
                    label = self.shadow.tensor_label(original).copied_by_kernel()
                elif torch_ops:
                    label = read
                    for op in torch_ops:
                        label = label.computed_by_torch(op)
                else:
                    label = read.computed_by_kernel()
                    computed = computed or bool(read.inputs)
                self.shadow.write(*span(tensor), label)
            if written and not computed:
                self._event("copy", name, None)

    def check_reads(self, reader: str, values: Any) -> None:
        """Before a tracked reader (a launch, a PyTorch call) reads its tensor arguments: memory that holds other
        bytes than its last tracked writer left was written where no hook sees (`kope.evaluate.inside.contents`)."""
        with self._own_calls():
            for tensor in _tensors(values):
                if tensor.numel() and self.contents.changed(tensor):
                    self.record_lost(f"memory that {reader} reads was written by something no hook sees")
                    return

    def note_writes(self, values: Any) -> set[int]:
        """After a tracked writer: what the memory of its tensor arguments and results holds now (each storage
        once). Returns the base addresses of the storages kept."""
        noted: set[int] = set()
        with self._own_calls():
            for tensor in _tensors(values):
                if tensor.numel() and int(tensor.untyped_storage().data_ptr()) not in noted:
                    base = self.contents.note(tensor)
                    if base is not None:
                        noted.add(base)
        return noted

    def record_reference(self, label: str) -> None:
        key = (label, self._candidate_line())
        self._references[key] = self._references.get(key, 0) + 1

    def traced_load(self, ptrs: Any, mask: Any, value: Any) -> None:
        assert self.launch is not None
        addresses, values = _lanes(ptrs, mask, value)
        if addresses is None or not addresses.size:
            return
        size = values.dtype.itemsize
        self.launch.note_load(values, self.shadow.label(int(addresses.min()), int(addresses.max()) + size))

    def traced_store(self, ptrs: Any, value: Any, mask: Any) -> None:
        assert self.launch is not None
        addresses, values = _lanes(ptrs, mask, value)
        if addresses is None or not addresses.size:
            return
        start, end = int(addresses.min()), int(addresses.max()) + values.dtype.itemsize
        self.shadow.write(start, end, self.launch.store_label(start, end, values))
        if self.launch.contents is not None:
            self.launch.contents.append((addresses, values))

    def traced_atomic(self, ptrs: Any, mask: Any) -> None:
        assert self.launch is not None
        data = getattr(ptrs, "data", None)
        if data is None or not getattr(data, "size", 0):
            return
        addresses = data.astype("uint64")
        if mask is not None and getattr(mask, "data", None) is not None:
            addresses = addresses[numpy.broadcast_to(mask_lanes(mask), data.shape)]
        if not addresses.size:
            return
        low, high = int(addresses.min()), int(addresses.max()) + 8
        launch = self.launch
        launch.contents = None
        launch.stored = True
        launch.stores.append((low, high, None))
        launch.lanes += int(addresses.size)
        launch.elements += int(addresses.size)
        launch.computed = launch.computed or bool(launch.read.inputs)
        label = launch.read.union(self.shadow.label(low, high)).computed_by_kernel()
        self.shadow.write(low, high, label)

    def _event(self, kind: str, what: str, line: int | None, **fields: Any) -> None:
        key = (kind, what, line)
        event = self._events.get(key)
        if event is None:
            if kind.startswith("host"):
                event = HostEvent(what=what, line=line, **fields)
            else:
                event = TorchCall(name=what, line=line)
            self._events[key] = event
            targets: dict[str, list[Any]] = {
                "host-read": self.provenance.host_reads,
                "host-built": self.provenance.host_built,
                "torch-input": self.provenance.torch_on_inputs,
                "epilogue": self.provenance.epilogue,
                "init": self.provenance.init_ops,
                "extension": self.provenance.extension_torch,
            }
            target = targets.get(kind)
            if target is not None:
                target.append(event)
            elif kind == "copy" and what not in self.provenance.copy_kernels:
                self.provenance.copy_kernels.append(what)
            return
        event.count += 1
        if isinstance(event, HostEvent):
            event.from_inputs = event.from_inputs or bool(fields.get("from_inputs"))
            event.elements = max(event.elements, int(fields.get("elements", 0)))

    def record_host_read(self, name: str, args: Any, kwargs: Any) -> None:
        source = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if source is None:
            return
        label = self.shadow.tensor_label(source)
        self._event(
            "host-read",
            f".{name}()" if not name.startswith("__") else name,
            self._candidate_line(),
            from_inputs=bool(label.inputs),
        )

    def record_storage_read(self, storage: Any, what: str) -> None:
        try:
            start = int(storage.data_ptr())
            end = start + int(storage.nbytes())
        except Exception:
            return
        label = self.shadow.label(start, end)
        self._event("host-read", what, self._candidate_line(), from_inputs=bool(label.inputs))

    def record_pointer_read(self, what: str, address: Any, size: Any) -> None:
        try:
            start = int(address if isinstance(address, int) else getattr(address, "value", 0) or 0)
            end = start + max(1, int(size))
        except Exception:
            return
        label = self.shadow.label(start, end)
        if not label.unknown or label.inputs:
            self._event("host-read", what, self._candidate_line(), from_inputs=bool(label.inputs))

    def record_host_built(self, name: str, tensor: torch.Tensor) -> None:
        self.shadow.write(*span(tensor), HOST)
        self._event("host-built", f"torch.{name}", self._candidate_line(), elements=int(tensor.numel()))

    def trace_call(self, name: str, args: Any, kwargs: Any, result: Any) -> None:  # noqa: C901 - the provenance rules for every PyTorch call kind, in one hot function (a call per op in the sandbox)
        """Give the memory a PyTorch call wrote the label of what it computed from."""
        if name in policy.QUERIES or name in policy.HOST_READS:
            if name in ("cpu", "to") and isinstance(result, torch.Tensor):
                self._moved(args, result)
            return
        outputs = [t for t in _tensors(result) if t.numel()]
        sources = [t for t in _tensors((args[1:] if name == "new_tensor" else args, kwargs)) if t.numel()]
        if name in policy.HOST_BUILT:
            if sources:
                label = union([self.shadow.tensor_label(t) for t in sources])
                for tensor in outputs:
                    self.shadow.write(*span(tensor), label)
            else:
                for tensor in outputs:
                    self.record_host_built(name, tensor)
            return
        if name in policy.FILLS:
            for tensor in outputs:
                self.shadow.write(*span(tensor), FILL)
            return
        if name in policy.REARRANGES:
            label = union([self.shadow.tensor_label(t) for t in sources]).moved_by_torch(name)
            for tensor in outputs:
                self.shadow.write(*span(tensor), label)
            return
        if name in policy.VIEWS or name in policy.MOVES:
            # PyTorch placing task data (an index tensor, an assignment or a copy into another tensor) is recorded
            # as a move: when the task itself only moves data, that is PyTorch doing the task
            indexed = name in ("__getitem__", "__setitem__") and len(args) >= 2 and any(True for _ in _tensors(args[1]))
            if name == "__setitem__" and len(args) >= 3 and isinstance(args[0], torch.Tensor):
                target = args[0]
                value = args[2]
                label = self.shadow.tensor_label(target)
                if isinstance(value, torch.Tensor):
                    placed = self.shadow.tensor_label(value)
                    label = label.union(placed.moved_by_torch("setitem") if placed.inputs else placed)
                self.shadow.write(*span(target), label.moved_by_torch("index_put") if indexed else label)
            elif indexed and isinstance(result, torch.Tensor) and isinstance(args[0], torch.Tensor):
                # advanced indexing (`x[rows, idx]`) gathers: a fresh tensor of the source's elements
                self.shadow.write(*span(result), self.shadow.tensor_label(args[0]).moved_by_torch("index"))
            elif name == "copy_" and len(args) >= 2 and isinstance(args[0], torch.Tensor):
                if isinstance(args[1], torch.Tensor):
                    copied = self.shadow.tensor_label(args[1])
                    self.shadow.write(*span(args[0]), copied.moved_by_torch("copy_") if copied.inputs else copied)
            elif name in ("fill_", "zero_") and args and isinstance(args[0], torch.Tensor):
                self.shadow.write(*span(args[0]), FILL)
            elif isinstance(result, torch.Tensor):
                self._moved(args, result)
                source = args[0] if args and isinstance(args[0], torch.Tensor) else None
                if source is not None and source.device.type != "cpu" and result.device.type == "cpu":
                    self.record_host_read(f"{name} (a device-to-host copy)", args, kwargs)
            return
        labels = [self.shadow.tensor_label(t) for t in sources]
        combined = union(labels)
        line = self._candidate_line()
        if self.phase == "init":
            label = Label(inputs=combined.inputs, init_ops=combined.init_ops | {name}, state=combined.state)
            self._event("init", name, line)
        else:
            if self.launch_depth > 0:
                self._event("extension", name, line)
            elif any(lab.inputs and not lab.kernel for lab in labels):
                self._event("torch-input", name, line)
            elif combined.kernel:
                self._event("epilogue", name, line)
                self._torch_elements += sum(t.numel() for t in outputs) + sum(t.numel() for t in sources)
            label = combined.computed_by_torch(name)
        for tensor in outputs:
            self.shadow.write(*span(tensor), label)

    def _moved(self, args: Any, result: torch.Tensor) -> None:
        source = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if source is None or not result.numel():
            return
        here, there = span(source), span(result)
        if here != there:
            self.shadow.write(*there, self.shadow.label(*here))

    def model_built(self, model: torch.nn.Module) -> None:
        self._built = {name: self.shadow.tensor_label(t) for name, t in _state(model) if t.numel()}

    def model_ready(self, model: torch.nn.Module, loaded: list[str]) -> None:
        """After the reference's state was copied in and the model moved: label its parameters and buffers."""
        self._state = [tensor for _, tensor in _state(model)]
        for name, tensor in _state(model):
            if not tensor.numel():
                continue
            built = self._built.get(name)
            label = STATE
            if name not in loaded and built is not None and built.init_ops:
                label = Label(init_ops=built.init_ops, state=True)
            self.shadow.write(*span(tensor), label)
        self._persistent = self.shadow.snapshot()

    def record_movement(self, name: str, args: Any, result: Any) -> None:
        """Memory that data movement (contiguous, reshape, clone, copy_...) filled from kernel-written
        memory counts as kernel-written too."""
        if not self._stores:
            return
        source = args[1] if name == "copy_" and len(args) > 1 else (args[0] if args else None)
        target = args[0] if name == "copy_" and args else result
        if not isinstance(source, torch.Tensor) or not isinstance(target, torch.Tensor):
            return
        low, high = storage_range(source)
        if any(low < end and start < high for start, end in self._stores):
            self._stores.append(storage_range(target))

    def record_fill(self, tensor: torch.Tensor) -> None:
        if tensor.numel():
            self._fills.append(storage_range(tensor))

    def record_store(self, pointer: Any) -> None:
        data = getattr(pointer, "data", None)
        if data is None or not getattr(data, "size", 0):
            return
        addresses = data.astype("uint64")
        self._stores.append((int(addresses.min()), int(addresses.max()) + 1))

    def _candidate_line(self) -> int | None:
        frame = _getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.candidate_file:
                return frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return None

    def record_call(self, name: str) -> None:
        key = (name, self._candidate_line())
        calls = self._body_calls if self.launch_depth > 0 else self._calls
        calls[key] = calls.get(key, 0) + 1

    def record_cast(self, name: str, args: Any, kwargs: Any) -> None:
        source = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if source is None or source.dtype != torch.float32:
            return
        target = name
        if name in ("to", "type"):
            dtype = kwargs.get("dtype")
            dtype = dtype if dtype is not None else next((a for a in args[1:] if isinstance(a, torch.dtype)), None)
            if dtype is None:
                return
            target = str(dtype).removeprefix("torch.")
        if target in policy.HALF_DTYPES:
            key = (f".{name}(): float32 -> {target}", self._candidate_line())
            self._casts[key] = self._casts.get(key, 0) + 1

    def record_lost(self, what: str) -> None:
        if what not in self.observations.instrumentation_lost:
            self.observations.instrumentation_lost.append(what)


class Recorder(TorchFunctionMode):
    """Records, while active, the PyTorch calls of the candidate's Python code (`Tracer.trace_call`...)."""

    def __init__(self, monitor: Tracer) -> None:
        super().__init__()
        self.monitor = monitor

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        monitor = self.monitor
        # Inside a launch PyTorch calls are the launcher's own, unless candidate code made them
        # (under the interpreter a kernel body can call a Python helper; an extension can call back).
        name = ""
        if monitor.launch_depth == 0 or caller_file(1) == monitor.candidate_file:
            name = policy.short_name(func)
            if monitor.phase == "forward" and not policy.allowed(name, monitor.extra_allow):
                monitor.record_call(name)
            elif name in ("to", "half", "bfloat16", "type"):
                monitor.record_cast(name, args, kwargs)
            if monitor.tracking and name in policy.HOST_READS:
                monitor.record_host_read(name, args, kwargs)
        watched = bool(name) and monitor.tracking and monitor.interpreted and name not in _NO_CONTENTS
        if watched:
            monitor.check_reads(f"torch `{name}`", (args, kwargs))
        result = func(*args, **kwargs)
        if name and monitor.tracking:
            monitor.trace_call(name, args, kwargs, result)
        if watched:
            monitor.note_writes((args, kwargs, result))
        if name in policy.MOVES or name in policy.VIEWS:
            monitor.record_movement(name, args, result)
        elif name in policy.FILLED_ALLOCATIONS and isinstance(result, torch.Tensor):
            monitor.record_fill(result)
        return result


_NO_CONTENTS = policy.QUERIES | policy.VIEWS
"""Calls that neither read values nor write memory: the contents check skips them."""


def _tensors(value: Any, depth: int = 0) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 3 and isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item, depth + 1)


def caller_file(depth: int) -> str:
    try:
        return _getframe(depth + 1).f_code.co_filename
    except ValueError:
        return ""


_ATEN_MOVES = frozenset(
    {
        "empty",
        "empty_strided",
        "empty_like",
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "zero_",
        "fill_",
        "view",
        "_unsafe_view",
        "reshape",
        "as_strided",
        "expand",
        "slice",
        "select",
        "permute",
        "transpose",
        "t",
        "unsqueeze",
        "squeeze",
        "alias",
        "detach",
        "clone",
        "copy_",
        "_to_copy",
        "contiguous",
        "lift_fresh",
        "resize_",
        "set_",
        "new_empty",
        "new_empty_strided",
        "new_zeros",
        "_reshape_alias",
        "split",
        "unbind",
        "narrow",
        "sym_size",
        "sym_stride",
        "sym_numel",
        "sym_storage_offset",
        "is_same_size",
        "_local_scalar_dense",
    }
)


class _AtenRecorder(TorchDispatchMode):
    """Inside an extension call: the ATen operations it calls back into (PyTorch compute, not kernel work)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        packet = getattr(func, "overloadpacket", func)
        name = str(getattr(packet, "__name__", func)).rsplit(".", 1)[-1]
        if name not in _ATEN_MOVES and name not in self.ops:
            self.ops.append(name)
        return func(*args, **(kwargs or {}))


def _lanes(ptrs: Any, mask: Any, value: Any) -> tuple[Any, Any]:
    """The addresses and values of the active lanes of an interpreted load or store."""
    addresses = getattr(ptrs, "data", None)
    values = getattr(value, "data", None)
    if addresses is None or values is None:
        return None, None
    values = numpy.broadcast_to(values, addresses.shape)
    if mask is not None and getattr(mask, "data", None) is not None:
        active = numpy.broadcast_to(mask_lanes(mask), addresses.shape)
        return addresses[active].astype("uint64"), values[active]
    return addresses.reshape(-1).astype("uint64"), values.reshape(-1)


def _state(model: torch.nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    yield from model.named_parameters()
    yield from ((name, b) for name, b in model.named_buffers() if b is not None)
