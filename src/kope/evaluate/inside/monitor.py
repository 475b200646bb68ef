"""Dynamic integrity checks: what the candidate does while it runs (inside the candidate worker).

Installed before the candidate module is loaded:

- every Triton launch (`JITFunction.run`, the interpreter's `InterpretedFunction.run`) and every
  call into a CUDA extension built with `torch.utils.cpp_extension.load[_inline]` is counted, per
  forward call, for kernels defined in the candidate's own file;
- a `TorchFunctionMode` records, during forward, every PyTorch call the candidate's Python code
  makes that is not on the allowlist (`kope.protocol.policy`), with the line of the candidate file
  it came from; calls made by a kernel launch itself are not the candidate's and are not recorded;
- the identities of functions a cheat would patch (comparisons, timers, Triton's launcher, kope's
  worker, the deterministic-mode switches) are taken, and compared again at the end.

After each forward: inputs are compared bit for bit with copies taken before (mutation), outputs
are checked for sharing storage with inputs (aliasing) and for being exactly `torch.Tensor`, and
live Python threads and child processes are counted. A *ghost replay* runs forward once more with
every launch turned into a no-op: an output identical to the real one means the kernels do no work.

Everything here runs in the candidate's process and is therefore defence in depth: the decisive
comparison happens in a process the candidate never touches, and the static rules flag code that
tries to switch these checks off.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import json
import os
import statistics
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

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
from kope.protocol import HostEvent, Observations, OutputPart, Provenance, TorchCall, policy

_equal = torch.equal
_uint8 = torch.uint8
_getframe = sys._getframe


def _watched(guarded: Sequence[types.ModuleType]) -> dict[str, Callable[[], object]]:
    """What a candidate must not replace; `guarded` are the caller's modules (the worker passes itself,
    so that the monitor need not import the worker that imports it)."""
    from kope.evaluate.inside import channel, tensors, timing

    watched: dict[str, Callable[[], object]] = {
        "torch.allclose": lambda: torch.allclose,
        "torch.equal": lambda: torch.equal,
        "torch.testing.assert_close": lambda: torch.testing.assert_close,
        "torch.Tensor.__eq__": lambda: torch.Tensor.__eq__,
        "torch.Tensor.to": lambda: torch.Tensor.to,
        "torch.Tensor.cpu": lambda: torch.Tensor.cpu,
        "torch.Tensor.detach": lambda: torch.Tensor.detach,
        "torch.Tensor.clone": lambda: torch.Tensor.clone,
        "torch.Tensor.contiguous": lambda: torch.Tensor.contiguous,
        "torch.Tensor.copy_": lambda: torch.Tensor.copy_,
        "torch.nn.Module.__call__": lambda: torch.nn.Module.__call__,
        "torch.cuda.synchronize": lambda: torch.cuda.synchronize,
        "torch.cuda.Event": lambda: torch.cuda.Event,
        "torch.cuda.Event.record": lambda: torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": lambda: torch.cuda.Event.elapsed_time,
        "torch.use_deterministic_algorithms": lambda: torch.use_deterministic_algorithms,
        "time.time": lambda: time.time,
        "time.perf_counter": lambda: time.perf_counter,
        "time.perf_counter_ns": lambda: time.perf_counter_ns,
        "time.monotonic": lambda: time.monotonic,
        "builtins.isinstance": lambda: builtins.isinstance,
        "builtins.len": lambda: builtins.len,
        "builtins.open": lambda: builtins.open,
        "builtins.print": lambda: builtins.print,
        "builtins.type": lambda: builtins.type,
        "json.dumps": lambda: json.dumps,
        "numpy.allclose": lambda: numpy.allclose,
        "numpy.array_equal": lambda: numpy.array_equal,
        "numpy.testing.assert_allclose": lambda: numpy.testing.assert_allclose,
        "builtins.__import__": lambda: builtins.__import__,
        "importlib.import_module": lambda: importlib.import_module,
        "sys._getframe": lambda: sys._getframe,
        "statistics.median": lambda: statistics.median,
        "kope.timing.median": lambda: timing.median,
    }
    for module in (*guarded, channel, tensors, timing, sys.modules[__name__]):
        for name, value in vars(module).items():
            if callable(value) and getattr(value, "__module__", None) == module.__name__:
                watched[f"{module.__name__}.{name}"] = _getter(module, name)
                for attribute, member in vars(value).items() if isinstance(value, type) else ():
                    if callable(member):
                        watched[f"{module.__name__}.{name}.{attribute}"] = _getter(value, attribute)
    with contextlib.suppress(ImportError):
        import triton.testing
        from triton.runtime.jit import JITFunction

        watched["triton.testing.do_bench"] = lambda: triton.testing.do_bench
        watched["triton.JITFunction.run"] = lambda: JITFunction.run
    with contextlib.suppress(ImportError):
        from triton.runtime.interpreter import InterpretedFunction

        watched["triton.InterpretedFunction.run"] = lambda: InterpretedFunction.run
    return watched


def _getter(owner: object, name: str) -> Callable[[], object]:
    return lambda: owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)


_REFERENCE_CALLS = {
    ("sys", "_getframe"),
    ("sys", "_current_frames"),
    ("gc", "get_objects"),
    ("gc", "get_referrers"),
    ("gc", "get_referents"),
    ("inspect", "currentframe"),
}
"""Functions that reach into the interpreter's state; a candidate calling them is looking for the harness.
Each wrapper returns what the original would have returned to its caller (frames are not shifted)."""
_REFERENCE_IMPORTS = frozenset({"gc", "inspect", "kope", "kope_task", "task", "__main__", "pickle", "marshal", "dill"})


class _Recorder(TorchFunctionMode):
    def __init__(self, monitor: Monitor) -> None:
        super().__init__()
        self.monitor = monitor

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        monitor = self.monitor
        # Inside a launch PyTorch calls are the launcher's own, unless candidate code made them
        # (under the interpreter a kernel body can call a Python helper; an extension can call back).
        name = ""
        if monitor.launch_depth == 0 or _caller_file(1) == monitor.candidate_file:
            name = policy.short_name(func)
            if monitor.phase == "forward" and not policy.allowed(name, monitor.extra_allow):
                monitor.record_call(name)
            elif name in ("to", "half", "bfloat16", "type"):
                monitor.record_cast(name, args, kwargs)
            if monitor.tracking and name in policy.HOST_READS:
                monitor.record_host_read(name, args, kwargs)
        result = func(*args, **kwargs)
        if name and monitor.tracking:
            monitor.trace_call(name, args, kwargs, result)
        if name in policy.MOVES or name in policy.VIEWS:
            monitor.record_movement(name, args, result)
        elif name in policy.FILLED_ALLOCATIONS and isinstance(result, torch.Tensor):
            monitor.record_fill(result)
        return result


def _tensors(value: Any, depth: int = 0) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 3 and isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item, depth + 1)


def _caller_file(depth: int) -> str:
    try:
        return _getframe(depth + 1).f_code.co_filename
    except ValueError:
        return ""


class Monitor:
    """Counts launches, records PyTorch calls and watches for tampering, in the candidate worker."""

    def __init__(
        self,
        candidate_file: str,
        extra_allow: frozenset[str] = frozenset(),
        guarded: Sequence[types.ModuleType] = (),
        copy_tolerance: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        self.candidate_file = candidate_file
        self.copy_tolerance = dict(copy_tolerance or {})
        """Per dtype, how close to a load a store may be and still be a copy (`IntegritySpec.copy_tolerance`)."""
        self.guarded = tuple(guarded)
        """Modules of the caller whose functions are watched for replacement, like the monitor's own."""
        self.extra_allow = extra_allow
        self.launch_depth = 0
        self.ghost = False
        self.launches = 0
        self.kernels: dict[str, int] = {}
        self.observations = Observations()
        self._calls: dict[tuple[str, int | None], int] = {}
        self._body_calls: dict[tuple[str, int | None], int] = {}
        self._casts: dict[tuple[str, int | None], int] = {}
        self._identities: dict[str, object] = {}
        self._watched: dict[str, Callable[[], object]] = {}
        self._threads_before = 0
        self._references: dict[tuple[str, int | None], int] = {}
        self._stores: list[tuple[int, int]] = []
        self._fills: list[tuple[int, int]] = []
        self.interpreted = False
        self.phase: str | None = None
        """None, "init" (ModelNew's construction) or "forward"."""
        self.tracking = False
        self.shadow = Shadow()
        self._persistent: list[tuple[int, int, Label]] = []
        self._built: dict[str, Label] = {}
        self.launch: LaunchState | None = None
        self.storage_reading = 0
        self.provenance = Provenance(method="interpreter" if os.environ.get("TRITON_INTERPRET") == "1" else "arguments")
        self._events: dict[tuple[str, str, int | None], TorchCall | HostEvent] = {}
        self._torch_elements = 0
        self._kernel_elements = 0

    # -- installation ----------------------------------------------------------------------

    def install(self) -> None:
        self._wrap_host_access()
        self._wrap_share_memory()
        self._wrap_triton()
        self._wrap_extensions()
        self._wrap_reference_access()
        self._watch_stores()
        self._watched = _watched(self.guarded)
        self._identities = {name: get() for name, get in self._watched.items()}
        self._threads_before = threading.active_count()

    def _wrap_triton(self) -> None:
        classes: list[type] = []
        with contextlib.suppress(ImportError):
            from triton.runtime.jit import JITFunction

            classes.append(JITFunction)
        with contextlib.suppress(ImportError):
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        for cls in classes:
            original = cls.run  # type: ignore[attr-defined]
            cls.run = self._launcher(original)  # type: ignore[attr-defined]

    def _launcher(self, original: Callable[..., Any]) -> Callable[..., Any]:
        monitor = self

        @functools.wraps(original)
        def run(kernel: Any, *args: Any, **kwargs: Any) -> Any:
            fn = getattr(kernel, "fn", None)
            code = getattr(fn, "__code__", None)
            own = code is not None and code.co_filename == monitor.candidate_file
            if own and not kwargs.get("warmup", False):
                name = getattr(fn, "__name__", "kernel")
                monitor.kernels[name] = monitor.kernels.get(name, 0) + 1
                monitor.launches += 1
                if monitor.ghost:
                    return None
            if own and monitor.tracking and not kwargs.get("warmup", False):
                return monitor.traced_launch(getattr(fn, "__name__", "kernel"), original, kernel, args, kwargs)
            monitor.launch_depth += 1
            try:
                return original(kernel, *args, **kwargs)
            finally:
                monitor.launch_depth -= 1

        return run

    def traced_launch(self, name: str, original: Callable[..., Any], kernel: Any, args: Any, kwargs: Any) -> Any:
        """One launch of a candidate kernel with provenance: loads and stores under the interpreter,
        the tensor arguments' contents before and after elsewhere."""
        arguments = [t for t in _tensors((args, kwargs)) if t.numel()] if not self.interpreted else []
        with self._own_calls():
            before = [t.detach().clone() for t in arguments]
        self.launch = LaunchState(name, tolerance=self.copy_tolerance) if self.interpreted else None
        self.launch_depth += 1
        try:
            return original(kernel, *args, **kwargs)
        finally:
            self.launch_depth -= 1
            state, self.launch = self.launch, None
            if state is not None:
                for start, end, label in state.finish():
                    self.shadow.write(start, end, label)
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
            written = [t for t, b in zip(arguments, before, strict=True) if b is None or not _same_bits(t, b)]
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

    def _wrap_reference_access(self) -> None:
        """Calls that inspect the interpreter, and imports of gc, inspect, kope..., made by candidate code."""
        import gc
        import inspect

        modules = {"sys": sys, "gc": gc, "inspect": inspect}
        for module_name, function_name in _REFERENCE_CALLS:
            module = modules[module_name]
            original = getattr(module, function_name, None)
            if original is not None:
                setattr(module, function_name, self._reference_wrapper(f"{module_name}.{function_name}", original))
        original_import = builtins.__import__
        monitor = self

        @functools.wraps(original_import)
        def guarded_import(name: str, *args: Any, **kwargs: Any) -> Any:
            if name.split(".")[0] in _REFERENCE_IMPORTS and _caller_file(1) == monitor.candidate_file:
                monitor.record_reference(f"import {name}")
            return original_import(name, *args, **kwargs)

        builtins.__import__ = guarded_import
        original_import_module = importlib.import_module

        @functools.wraps(original_import_module)
        def guarded_import_module(name: str, package: str | None = None) -> Any:
            if name.split(".")[0] in _REFERENCE_IMPORTS and _caller_file(1) == monitor.candidate_file:
                monitor.record_reference(f"import {name}")
            return original_import_module(name, package)

        importlib.import_module = guarded_import_module

    def _reference_wrapper(self, label: str, original: Callable[..., Any]) -> Callable[..., Any]:
        monitor = self

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _caller_file(1) == monitor.candidate_file:
                monitor.record_reference(label)
            if label == "sys._getframe":
                depth = args[0] if args else kwargs.get("depth", 0)
                return original(depth + 1)
            if label == "inspect.currentframe":
                return _getframe(1)
            return original(*args, **kwargs)

        return wrapper

    def record_reference(self, label: str) -> None:
        key = (label, self._candidate_line())
        self._references[key] = self._references.get(key, 0) + 1

    def _watch_stores(self) -> None:
        """Under the interpreter, follow every load and store of the candidate's kernels."""
        try:
            from triton.runtime import interpreter
        except ImportError:
            return
        self.interpreted = os.environ.get("TRITON_INTERPRET") == "1"
        builder = interpreter.InterpreterBuilder
        monitor = self
        load = getattr(builder, "create_masked_load", None)
        if load is not None:

            def masked_load(builder: Any, ptrs: Any, mask: Any, *rest: Any, _original: Any = load) -> Any:
                value = _original(builder, ptrs, mask, *rest)
                if monitor.launch is not None:
                    monitor.traced_load(ptrs, mask, value)
                return value

            builder.create_masked_load = functools.wraps(load)(masked_load)
        store = getattr(builder, "create_masked_store", None)
        if store is not None:

            def masked_store(builder: Any, ptrs: Any, value: Any, mask: Any, *rest: Any, _original: Any = store) -> Any:
                monitor.record_store(ptrs)
                if monitor.launch is not None:
                    monitor.traced_store(ptrs, value, mask)
                return _original(builder, ptrs, value, mask, *rest)

            builder.create_masked_store = functools.wraps(store)(masked_store)
        for method in ("create_atomic_rmw", "create_atomic_cas"):
            original = getattr(builder, method, None)
            if original is None:
                continue

            def wrapped(*args: Any, _original: Callable[..., Any] = original, _method: str = method) -> Any:
                pointer = args[2] if _method == "create_atomic_rmw" else args[1]
                monitor.record_store(pointer)
                if monitor.launch is not None:
                    monitor.traced_atomic(pointer, args[4] if _method == "create_atomic_rmw" else None)
                return _original(*args)

            setattr(builder, method, functools.wraps(original)(wrapped))

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
            addresses = addresses[numpy.broadcast_to(mask.data, data.shape)]
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

    # -- provenance of PyTorch calls and host access -----------------------------------------

    def _wrap_share_memory(self) -> None:
        """`share_memory_` moves a tensor's storage to a new address, where what kope knows of its bytes (which
        input, which kernel) no longer applies: no kernel needs it, so a call from the candidate is tampering."""
        import torch.storage as storage_module

        monitor = self
        for cls in (
            torch.Tensor,
            storage_module._StorageBase,
            storage_module.UntypedStorage,
            storage_module.TypedStorage,
        ):
            original = cls.__dict__.get("share_memory_")
            if original is None:
                continue

            def share(self_: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                if monitor.launch_depth == 0:
                    monitor._lost("share_memory_ moved a tensor's storage (what kope knows of its data is lost)")
                return _original(self_, *args, **kwargs)

            cls.share_memory_ = functools.wraps(original)(share)  # type: ignore[method-assign,assignment]

    def _wrap_host_access(self) -> None:  # noqa: C901 - one wrapper per host-read entry point of PyTorch, installed in one place so none is missed
        """Reads of tensor storage into Python (bytes(), struct, iteration, tolist) and tensors built
        from host buffers (from_numpy, frombuffer), which PyTorch's function modes do not see."""
        import torch.storage as storage_module

        monitor = self
        for cls in (storage_module._StorageBase, storage_module.UntypedStorage, storage_module.TypedStorage):
            for method in ("__iter__", "__getitem__", "tolist"):
                original = cls.__dict__.get(method)
                if original is None:
                    continue

                def reader(self_: Any, *args: Any, _original: Any = original, _method: str = method) -> Any:
                    if monitor.tracking and monitor.launch_depth == 0 and not monitor.storage_reading:
                        monitor.record_storage_read(self_, f"reading the tensor's storage ({_method})")
                    if _method == "__getitem__":
                        return _original(self_, *args)
                    monitor.storage_reading += 1
                    try:
                        result = _original(self_, *args)
                        return iter(list(result)) if _method == "__iter__" else result
                    finally:
                        monitor.storage_reading -= 1

                setattr(cls, method, functools.wraps(original)(reader))
        for name in ("from_numpy", "frombuffer", "from_dlpack"):
            original = getattr(torch, name, None)
            if original is None:
                continue

            def builder(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
                result = _original(*args, **kwargs)
                from_tensor = bool(args) and isinstance(args[0], torch.Tensor)
                if monitor.tracking and isinstance(result, torch.Tensor) and not from_tensor:
                    monitor.record_host_built(_name, result)
                return result

            setattr(torch, name, functools.wraps(original)(builder))
        import ctypes

        for name in ("string_at", "memmove"):
            original = getattr(ctypes, name, None)
            if original is None:
                continue

            def pointer_read(*args: Any, _original: Any = original, _name: str = name) -> Any:
                if monitor.tracking and len(args) >= 2:
                    source = args[1] if _name == "memmove" else args[0]
                    size = args[2] if _name == "memmove" else (args[1] if len(args) > 1 else 1)
                    monitor.record_pointer_read(f"ctypes.{_name}", source, size)
                    if _name == "memmove" and isinstance(args[0], int):
                        monitor.shadow.write(args[0], args[0] + int(size), HOST)
                return _original(*args)

            setattr(ctypes, name, functools.wraps(original)(pointer_read))

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

    # -- construction ----------------------------------------------------------------------

    @contextlib.contextmanager
    def construction(self) -> Iterator[None]:
        """Wrap ModelNew's construction: PyTorch computation in __init__ is labelled as such."""
        self.phase, self.tracking = "init", True
        try:
            with _Recorder(self):
                yield
        finally:
            self.phase, self.tracking = None, False

    def model_built(self, model: torch.nn.Module) -> None:
        self._built = {name: self.shadow.tensor_label(t) for name, t in _state(model) if t.numel()}

    def model_ready(self, model: torch.nn.Module, loaded: list[str]) -> None:
        """After the reference's state was copied in and the model moved: label its parameters and buffers."""
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
        low, high = _memory(source)
        if any(low < end and start < high for start, end in self._stores):
            self._stores.append(_memory(target))

    def record_fill(self, tensor: torch.Tensor) -> None:
        if tensor.numel():
            self._fills.append(_memory(tensor))

    def record_store(self, pointer: Any) -> None:
        data = getattr(pointer, "data", None)
        if data is None or not getattr(data, "size", 0):
            return
        addresses = data.astype("uint64")
        self._stores.append((int(addresses.min()), int(addresses.max()) + 1))

    def _wrap_extensions(self) -> None:
        from torch.utils import cpp_extension

        for name in ("load_inline", "load"):
            original = getattr(cpp_extension, name)
            setattr(cpp_extension, name, self._extension_loader(original))

    def _extension_loader(self, original: Callable[..., Any]) -> Callable[..., Any]:
        monitor = self

        @functools.wraps(original)
        def load(*args: Any, **kwargs: Any) -> Any:
            return _CountingModule(original(*args, **kwargs), monitor)

        return load

    # -- recording -------------------------------------------------------------------------

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

    # -- forward ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def forward(self, inputs: list[Any] | None = None) -> Iterator[None]:
        """Wrap one real forward call: counts its launches, records its PyTorch calls, follows provenance."""
        self.launches = 0
        self._stores = []
        self._fills = []
        self.shadow.clear()
        for start, end, label in self._persistent:
            self.shadow.write(start, end, label)
        for index, value in enumerate(inputs or []):
            if isinstance(value, torch.Tensor) and value.numel():
                self.shadow.write(*span(value), Label(inputs=frozenset({index})))
        self._torch_elements = self._kernel_elements = 0
        recorder = _Recorder(self)
        self.phase, self.tracking = "forward", True
        try:
            with recorder:
                yield
                stack = torch.overrides._get_current_function_mode_stack()
                if not stack or stack[-1] is not recorder:
                    self._lost("the PyTorch function-mode stack was changed during forward")
        finally:
            self.phase, self.tracking = None, False
        self.observations.launches_per_forward.append(self.launches)
        prov = self.provenance
        if self._torch_elements * max(prov.kernel_elements, 1) >= prov.torch_elements * max(self._kernel_elements, 1):
            prov.torch_elements, prov.kernel_elements = self._torch_elements, self._kernel_elements

    @contextlib.contextmanager
    def ghosted(self) -> Iterator[None]:
        """Within: every launch of the candidate's kernels returns at once without running."""
        self.ghost = True
        try:
            yield
        finally:
            self.ghost = False

    def check_call(self, inputs: list[Any], before: list[Any], output: Any) -> None:
        """After a forward: input mutation, output aliasing, output types, threads, processes."""
        for index, (now, then) in enumerate(zip(inputs, before, strict=False)):
            changed = isinstance(now, torch.Tensor) and isinstance(then, torch.Tensor) and not _same_bits(now, then)
            if changed and index not in self.observations.mutated_inputs:
                self.observations.mutated_inputs.append(index)
        input_ranges = [_memory(t) for t in inputs if isinstance(t, torch.Tensor) and t.numel()]
        for path, leaf in _leaves(output):
            if type(leaf) is not torch.Tensor:
                kind = f"{path}: {type(leaf).__module__}.{type(leaf).__qualname__}"
                if isinstance(leaf, torch.Tensor) and kind not in self.observations.output_types:
                    self.observations.output_types.append(kind)
                continue
            if not leaf.numel():
                continue
            start, end = _memory(leaf)
            if (
                any(start < high and low < end for low, high in input_ranges)
                and path not in self.observations.aliased_outputs
            ):
                self.observations.aliased_outputs.append(path)
            if self.interpreted and self.shadow.changed(leaf):
                self._lost(f"{path} holds values other than those its kernel stored: written by something no hook sees")
            foreign = self._judge_output(path, leaf)
            if self.interpreted and self.launches and foreign and path not in self.observations.unwritten_outputs:
                self.observations.unwritten_outputs.append(path)
        self.observations.threads_alive = max(
            self.observations.threads_alive, threading.active_count() - self._threads_before
        )
        self.observations.children_alive = max(self.observations.children_alive, _child_processes())

    def _judge_output(self, path: str, leaf: torch.Tensor) -> bool:
        """Record where the output's values came from; True when some of it no one tracked wrote."""
        start, end = span(leaf)
        total = max(end - start, 1)
        unknown = False
        for low, high, label in self.shadow.read(start, end):
            constant = False
            if not label.kernel:
                size = leaf.element_size()
                constant = _constant(leaf, (low - start) // size, (high - start) // size, 1 if label.fill else 2)
            unknown = unknown or label.unknown
            part = OutputPart(
                path=path,
                fraction=round((high - low) / total, 4),
                inputs=sorted(label.inputs),
                kernel=label.kernel,
                copied=label.copied,
                torch_ops=sorted(label.torch_ops),
                init_ops=sorted(label.init_ops),
                host=label.host,
                fill=label.fill,
                state=label.state,
                unknown=label.unknown,
                constant=constant,
                moves=sorted(label.moves),
            )
            key = part.model_dump(exclude={"fraction"})
            if all(p.model_dump(exclude={"fraction"}) != key for p in self.provenance.outputs):
                self.provenance.outputs.append(part)
        return unknown

    # -- the end ---------------------------------------------------------------------------

    def finish(self) -> Observations:
        obs = self.observations
        obs.kernels = dict(self.kernels)
        obs.provenance = self.provenance
        obs.torch_calls = [
            TorchCall(name=n, line=line, count=c) for (n, line), c in sorted(self._calls.items(), key=str)
        ]
        obs.kernel_body_calls = [
            TorchCall(name=n, line=line, count=c) for (n, line), c in sorted(self._body_calls.items(), key=str)
        ]
        obs.downcasts = [TorchCall(name=n, line=line, count=c) for (n, line), c in sorted(self._casts.items(), key=str)]
        obs.reference_calls = [
            TorchCall(name=n, line=line, count=c) for (n, line), c in sorted(self._references.items(), key=str)
        ]
        for name, get in self._watched.items():
            try:
                current = get()
            except Exception:
                current = None
            if current is not self._identities.get(name) and name not in obs.tampered:
                obs.tampered.append(name)
        if not torch.are_deterministic_algorithms_enabled():
            self._lost("deterministic mode (which poisons uninitialised memory) was turned off")
        fill = getattr(torch._C, "_get_deterministic_fill_uninitialized_memory", None)
        if fill is not None and not fill():
            self._lost("filling of uninitialised memory was turned off")
        return obs

    def _lost(self, what: str) -> None:
        if what not in self.observations.instrumentation_lost:
            self.observations.instrumentation_lost.append(what)


class _CountingModule:
    """A CUDA extension whose functions count as kernel launches."""

    def __init__(self, module: Any, monitor: Monitor) -> None:
        self._module = module
        self._monitor = monitor

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if not callable(value):
            return value
        monitor = self._monitor

        @functools.wraps(value)
        def launch(*args: Any, **kwargs: Any) -> Any:
            monitor.kernels[name] = monitor.kernels.get(name, 0) + 1
            monitor.launches += 1
            if monitor.ghost:
                return None
            if monitor.tracking:
                return monitor.traced_extension(name, value, args, kwargs)
            monitor.launch_depth += 1
            try:
                return value(*args, **kwargs)
            finally:
                monitor.launch_depth -= 1

        return launch


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
    active = getattr(mask, "data", None)
    if active is not None:
        active = numpy.broadcast_to(active, addresses.shape)
        return addresses[active].astype("uint64"), values[active]
    return addresses.reshape(-1).astype("uint64"), values.reshape(-1)


def _state(model: torch.nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    yield from model.named_parameters()
    yield from ((name, b) for name, b in model.named_buffers() if b is not None)


def _constant(tensor: torch.Tensor, first: int, last: int, minimum: int) -> bool:
    """Every element in [first, last) (of a contiguous tensor; else all) holds one value (NaN counts as
    one), and there are at least `minimum` of them."""
    with torch._C.DisableTorchFunctionSubclass():
        flat = tensor.detach().reshape(-1)
        if tensor.is_contiguous():
            flat = flat[first:last]
        if flat.numel() < minimum:
            return False  # one computed value says nothing: a scalar written without reading the inputs is judged
        if flat.is_floating_point() and bool(flat.isnan().all()):
            return True
        return bool((flat == flat[0]).all())


def _leaves(value: Any, path: str = "output") -> Iterator[tuple[str, Any]]:
    if isinstance(value, tuple | list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}[{key!r}]")
    else:
        yield path, value


def _memory(tensor: torch.Tensor) -> tuple[int, int]:
    """The bytes a tensor's storage spans (a view's storage is its base's)."""
    with torch._C.DisableTorchFunctionSubclass():
        storage = tensor.untyped_storage()
        return int(storage.data_ptr()), int(storage.data_ptr()) + int(storage.nbytes())


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    with torch._C.DisableTorchFunctionSubclass():
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.numel() == 0:
            return True
        return bool(_equal(a.detach().contiguous().view(_uint8), b.detach().contiguous().view(_uint8)))


def same_outputs(a: Any, b: Any) -> bool:
    """Bit-for-bit equality of two outputs (NaN equals NaN)."""
    left, right = list(_leaves(a)), list(_leaves(b))
    if len(left) != len(right):
        return False
    for (_, x), (_, y) in zip(left, right, strict=True):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():
                x, y = x.detach().cpu(), y.detach().cpu()
            if not _same_bits(x, y):
                return False
        elif x != y:
            return False
    return True


def _child_processes() -> int:
    """Live children of this process, from /proc/self (readable at every sandbox level)."""
    children: set[str] = set()
    try:
        for task in os.scandir("/proc/self/task"):
            with contextlib.suppress(OSError), open(f"{task.path}/children") as handle:
                children.update(handle.read().split())
    except OSError:
        return 0
    count = 0
    for child in children:
        try:
            with open(f"/proc/{child}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            count += 1  # unreadable (the Landlock level): count it
            continue
        if stat[stat.rfind(b")") + 2 :].split()[0] != b"Z":
            count += 1
    return count


def output_tensors(output: Any) -> list[torch.Tensor]:
    return [leaf for _, leaf in _leaves(output) if isinstance(leaf, torch.Tensor)]
