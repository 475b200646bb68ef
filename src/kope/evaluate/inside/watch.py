"""The tamper watch: the identities of the functions a cheat would replace (comparisons, timers, Triton's
launcher, kope's own worker and monitor, the deterministic-mode switches), taken at install and compared at the end.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import json
import statistics
import sys
import time
import types
from collections.abc import Callable, Iterator, Sequence

import numpy
import torch


def watched(guarded: Sequence[types.ModuleType]) -> dict[str, Callable[[], object]]:
    """What a candidate must not replace; `guarded` are kope's modules to watch besides the fixed list: the
    monitor's own and the caller's (the worker passes itself, so that the monitor need not import the worker that
    imports it). A class's methods are watched on the class, its inherited ones too (`Monitor` is a `Tracer`)."""
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
    for module in (*guarded, channel, tensors, timing):
        for name, value in vars(module).items():
            if callable(value) and getattr(value, "__module__", None) == module.__name__:
                watched[f"{module.__name__}.{name}"] = _getter(module, name)
                for attribute in _methods(value):
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


def _methods(value: object) -> Iterator[str]:
    """The callable members of a class defined by kope (its own and those of its kope bases)."""
    if not isinstance(value, type):
        return
    for klass in value.__mro__:
        if klass.__module__.startswith("kope."):
            yield from (attribute for attribute, member in vars(klass).items() if callable(member))


def _getter(owner: object, name: str) -> Callable[[], object]:
    return lambda: owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
