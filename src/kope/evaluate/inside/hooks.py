"""Where the monitor's tracer is attached, before the candidate module is loaded: every Triton launch
(`JITFunction.run`, the interpreter's `InterpretedFunction.run`) and every call into a CUDA extension built with
`torch.utils.cpp_extension.load[_inline]`; the interpreter's loads, stores and atomics; reads of tensor storage
into Python and tensors built from host buffers; `share_memory_`; calls and imports that reach for the
interpreter's state (frames, `gc`, `inspect`, kope).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

import torch

from kope.evaluate.inside.provenance import HOST
from kope.evaluate.inside.tracing import Tracer, caller_file

_getframe = sys._getframe


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


def install(monitor: Tracer) -> None:
    """Attach every hook to `monitor`."""
    _wrap_host_access(monitor)
    _wrap_share_memory(monitor)
    _wrap_triton(monitor)
    _wrap_extensions(monitor)
    _wrap_reference_access(monitor)
    _watch_stores(monitor)


def _wrap_host_access(monitor: Tracer) -> None:  # noqa: C901 - one wrapper per host-read entry point of PyTorch, installed in one place so none is missed
    """Reads of tensor storage into Python (bytes(), struct, iteration, tolist) and tensors built
    from host buffers (from_numpy, frombuffer), which PyTorch's function modes do not see."""
    import torch.storage as storage_module

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


def _wrap_share_memory(monitor: Tracer) -> None:
    """`share_memory_` moves a tensor's storage to a new address, where what kope knows of its bytes (which
    input, which kernel) no longer applies: no kernel needs it, so a call from the candidate is tampering."""
    import torch.storage as storage_module

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
                monitor.record_lost("share_memory_ moved a tensor's storage (what kope knows of its data is lost)")
            return _original(self_, *args, **kwargs)

        cls.share_memory_ = functools.wraps(original)(share)  # type: ignore[method-assign,assignment]


def _wrap_triton(monitor: Tracer) -> None:
    classes: list[type] = []
    with contextlib.suppress(ImportError):
        from triton.runtime.jit import JITFunction

        classes.append(JITFunction)
    with contextlib.suppress(ImportError):
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    for cls in classes:
        original = cls.run  # type: ignore[attr-defined]
        cls.run = _launcher(monitor, original)  # type: ignore[attr-defined]


def _wrap_extensions(monitor: Tracer) -> None:
    from torch.utils import cpp_extension

    for name in ("load_inline", "load"):
        original = getattr(cpp_extension, name)
        setattr(cpp_extension, name, _extension_loader(monitor, original))


def _wrap_reference_access(monitor: Tracer) -> None:
    """Calls that inspect the interpreter, and imports of gc, inspect, kope..., made by candidate code."""
    import gc
    import inspect

    modules = {"sys": sys, "gc": gc, "inspect": inspect}
    for module_name, function_name in _REFERENCE_CALLS:
        module = modules[module_name]
        original = getattr(module, function_name, None)
        if original is not None:
            setattr(module, function_name, _reference_wrapper(monitor, f"{module_name}.{function_name}", original))
    original_import = builtins.__import__

    @functools.wraps(original_import)
    def guarded_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] in _REFERENCE_IMPORTS and caller_file(1) == monitor.candidate_file:
            monitor.record_reference(f"import {name}")
        return original_import(name, *args, **kwargs)

    builtins.__import__ = guarded_import
    original_import_module = importlib.import_module

    @functools.wraps(original_import_module)
    def guarded_import_module(name: str, package: str | None = None) -> Any:
        if name.split(".")[0] in _REFERENCE_IMPORTS and caller_file(1) == monitor.candidate_file:
            monitor.record_reference(f"import {name}")
        return original_import_module(name, package)

    importlib.import_module = guarded_import_module


def _watch_stores(monitor: Tracer) -> None:
    """Under the interpreter, follow every load and store of the candidate's kernels."""
    try:
        from triton.runtime import interpreter
    except ImportError:
        return
    monitor.interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    builder = interpreter.InterpreterBuilder
    load = getattr(builder, "create_masked_load", None)
    if load is not None:

        def masked_load(builder: Any, ptrs: Any, mask: Any, *rest: Any, _original: Any = load, **kw: Any) -> Any:
            value = _original(builder, ptrs, mask, *rest, **kw)  # a tensor descriptor's load passes keywords
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


def _launcher(monitor: Tracer, original: Callable[..., Any]) -> Callable[..., Any]:

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


def _reference_wrapper(monitor: Tracer, label: str, original: Callable[..., Any]) -> Callable[..., Any]:

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if caller_file(1) == monitor.candidate_file:
            monitor.record_reference(label)
        if label == "sys._getframe":
            depth = args[0] if args else kwargs.get("depth", 0)
            return original(depth + 1)
        if label == "inspect.currentframe":
            return _getframe(1)
        return original(*args, **kwargs)

    return wrapper


def _extension_loader(monitor: Tracer, original: Callable[..., Any]) -> Callable[..., Any]:

    @functools.wraps(original)
    def load(*args: Any, **kwargs: Any) -> Any:
        return _CountingModule(original(*args, **kwargs), monitor)

    return load


class _CountingModule:
    """A CUDA extension whose functions count as kernel launches."""

    def __init__(self, module: Any, monitor: Tracer) -> None:
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
