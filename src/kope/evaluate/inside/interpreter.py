"""What generated Triton code needs beyond `@triton.jit` on the CPU interpreter (runs inside the sandbox).

Generated kernels are written for a GPU. Under `TRITON_INTERPRET=1` several of their habits fail in
ways that say nothing about the kernel's correctness:

- `@triton.autotune` benchmarks every config through the GPU driver (`0 active drivers`). Here the
  autotuner runs no benchmark: the worker chooses the config, a different one per trial
  (`select(trial)`: trial 0 the first config, trial 1 the second, ...), so correctness is checked with
  every config up to the number of trials, and `runs()` says which ran. Timing belongs to the GPU.
  What a benchmark leaves behind does count: on a GPU the first call with a new tuning key runs the kernel
  many times before the run whose output is returned, and only `reset_to_zero` / `restore_value` keep
  those runs' writes out of it (a kernel that adds into its output with `tl.atomic_add` and names neither
  returns a multiple of the sum). For a kernel with atomics, that first call here runs the chosen config
  once as the benchmark does (the hooks around it), then resets as the autotuner does, then runs it.
- `tl.extra.libdevice` / `tl.extra.cuda.libdevice` functions are external CUDA symbols, which the
  interpreter refuses; they are computed here with NumPy (PyTorch for the special functions) from
  the symbol's name (`__nv_tanhf` is tanh).
- `triton.testing.do_bench` and the driver's device queries need a GPU, as do `torch.cuda` queries
  on a CPU-only PyTorch: they raise `InterpreterUnsupported` (or PyTorch's own error), which the worker
  reports as error kind `interpreter` with a hint (`--device cuda` on a GPU machine), never as a
  failure of the kernel.
- `tl.device_assert` is checked (as with `debug=True` on a GPU): a failing assertion is the
  kernel's `runtime` error, not a silent pass. Integer overflow is not, unless a job asks
  (`overflow_check`): Triton's `sanitize_overflow` redoes every `+`, `-` and `*` of 32-bit integers
  in int64 beside the operation and asserts on a wrap, about 3x the time of an index-heavy kernel,
  and an honest hash that wraps (as int32 does on a GPU, which checks nothing without `debug`)
  would be an error.

- What the GPU compiler refuses, the interpreter runs (a helper without `@triton.jit`, `continue`, a
  global that is not a constant...): every launch is first lowered by Triton's GPU front end
  (kope.evaluate.inside.frontend), and a kernel it refuses raises its error at the launch, as on a GPU.

`@triton.heuristics` needs nothing: it computes its values on the CPU as on the GPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from kope.protocol import AutotuneRun

HINT = "run it on a GPU machine with --device cuda (the CPU interpreter has no GPU driver)"
_CUDA_ONLY = (
    "Torch not compiled with CUDA enabled",
    "active drivers",
    "Found no NVIDIA driver",
    "No CUDA GPUs are available",
    "CUDA driver",
    "cuda runtime",
)

_lock = threading.Lock()
_selection = 0
_runs: dict[tuple[str, int], AutotuneRun] = {}
_installed = False
_frontend = True


class InterpreterUnsupported(RuntimeError):
    """The candidate called something only a GPU provides."""


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def is_unsupported(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) is the interpreter's or a CPU-only PyTorch's lack of a GPU."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, InterpreterUnsupported):
            return True
        text = str(current)
        if any(marker.lower() in text.lower() for marker in _CUDA_ONLY):
            return True
        current = current.__cause__ or current.__context__
    return False


def install(*, overflow_check: bool = False, gpu_frontend: bool = True) -> None:
    """Patch Triton for the interpreter (idempotent; a no-op unless `TRITON_INTERPRET=1`)."""
    global _installed, _frontend
    if not interpreting():
        return
    _set_options(overflow_check)
    _frontend = gpu_frontend
    if _installed:
        return
    _patch_autotuner()
    _patch_testing()
    _patch_libdevice()
    _patch_frontend()
    _installed = True


def select(trial: int) -> None:
    """The config index autotuned kernels use from now on (modulo their number of configs)."""
    global _selection
    _selection = trial


@contextlib.contextmanager
def selected(trial: int) -> Iterator[None]:
    previous = _selection
    select(trial)
    try:
        yield
    finally:
        select(previous)


def runs() -> list[AutotuneRun]:
    """Every (kernel, config) that ran, with the selections (trials) it ran for."""
    with _lock:
        return [run.model_copy(deep=True) for run in _runs.values()]


def reset() -> None:
    with _lock:
        _runs.clear()


def _label(config: Any) -> str:
    parts = [f"{k}={v}" for k, v in getattr(config, "kwargs", {}).items()]
    for name in ("num_warps", "num_stages"):
        value = getattr(config, name, None)
        if value is not None:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


def _record(kernel: str, index: int, total: int, config: Any) -> None:
    with _lock:
        run = _runs.setdefault(
            (kernel, index), AutotuneRun(kernel=kernel, config=_label(config), index=index, configs=total)
        )
        if _selection not in run.trials:
            run.trials.append(_selection)


def _patch_autotuner() -> None:
    from triton.runtime import autotuner

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.nargs = dict(zip(self.arg_names, args, strict=False))
        configs = list(self.configs)
        if len(configs) > 1 and getattr(self, "early_config_prune", None):
            configs = list(self.early_config_prune(configs, self.nargs, **kwargs)) or configs
        index = _selection % len(configs)
        config = configs[index]
        _record(getattr(self.base_fn, "__name__", "kernel"), index, len(configs), config)
        self.best_config = config
        full = {**self.nargs, **kwargs, **config.all_kwargs()}
        if len(configs) > 1 and _first_tuning(self, args, kwargs):
            _benchmark_once(self, config, full, args, kwargs)
        if config.pre_hook is not None:
            config.pre_hook(full)
        try:
            return self.fn.run(*args, **kwargs, **config.all_kwargs())
        finally:
            self.nargs = None

    autotuner.Autotuner.run = run


def _first_tuning(tuner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether this call of an autotuned kernel with atomics is the first with its tuning key (the values of the
    autotune's `key` arguments and the tensors' dtypes, as Triton forms it): the call a GPU benchmarks."""
    atomic = tuner.__dict__.get("_kope_atomic")
    if atomic is None:  # read once per kernel, not at every launch
        atomic = tuner.__dict__["_kope_atomic"] = "atomic_" in _kernel_source(tuner)
    if not atomic:
        return False
    given = {**dict(zip(tuner.arg_names, args, strict=False)), **kwargs}
    key = [repr(given[name]) for name in tuner.keys if name in given]
    key += [str(value.dtype) for value in given.values() if hasattr(value, "dtype")]
    seen: set[tuple[str, ...]] = tuner.__dict__.setdefault("_kope_tuned", set())
    if tuple(key) in seen:
        return False
    seen.add(tuple(key))
    return True


def _kernel_source(tuner: Any) -> str:
    """The autotuned kernel's source text ('' where it cannot be read)."""
    try:
        return inspect.getsource(tuner.base_fn)
    except (OSError, TypeError):
        return str(getattr(tuner.fn, "src", ""))


def _benchmark_once(
    tuner: Any, config: Any, full: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """One run of `config` as the autotuner's benchmark makes it (its hooks around it), then the reset the autotuner
    does before the run that counts (`reset_to_zero`; `restore_value` is restored by the post-hook)."""
    if config.pre_hook is not None:
        config.pre_hook(full)
    tuner.pre_hook(full)
    try:
        tuner.fn.run(*args, **kwargs, **config.all_kwargs())
    finally:
        tuner.post_hook(full, exception=None)
    tuner.pre_hook(full, reset_only=True)


def _patch_frontend() -> None:
    """Each launch lowered by the GPU compiler's front end first (kope.evaluate.inside.frontend); a jitted function
    called outside any launch refused as a GPU refuses it (`HOST_CALL`)."""
    from triton.runtime.interpreter import InterpretedFunction

    from kope.evaluate.inside import frontend

    original = InterpretedFunction.run

    @functools.wraps(original)
    def run(self: Any, *args: Any, grid: Any, warmup: Any, **kwargs: Any) -> Any:
        if _frontend and not warmup:
            frontend.check(self.fn, self.kwargs, args, kwargs)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    InterpretedFunction.run = run
    called = InterpretedFunction.__call__

    @functools.wraps(called)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _frontend and not _scopes:
            raise RuntimeError(HOST_CALL)
        return called(self, *args, **kwargs)

    InterpretedFunction.__call__ = call


HOST_CALL = "Cannot call @triton.jit'd outside of the scope of a kernel"
"""What Triton says of a `@triton.jit` function (`tl.cdiv`, a helper) called from host code on a GPU. The interpreter
would run it there, and its patches of the language would outlive the call (no launch restores them)."""


def _set_options(overflow_check: bool) -> None:
    """`tl.device_assert` checked, as with `debug=True` on a GPU (the interpreter's default skips it); integer
    overflow only when asked (the module's docstring says why)."""
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    options = getattr(builder, "options", None)
    if not dataclasses.is_dataclass(options) or isinstance(options, type):
        return
    wanted = {"debug": True, "sanitize_overflow": overflow_check}  # the fields this Triton has
    builder.options = dataclasses.replace(options, **{k: v for k, v in wanted.items() if hasattr(options, k)})


def _gpu_only(name: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise InterpreterUnsupported(f"{name} measures kernels on a GPU; the CPU interpreter has none")

    return refuse


def _patch_testing() -> None:
    import triton.testing

    for name in ("do_bench", "do_bench_cudagraph"):
        if hasattr(triton.testing, name):
            setattr(triton.testing, name, _gpu_only(f"triton.testing.{name}"))


# -- libdevice ----------------------------------------------------------------------------------


def _torch_unary(name: str) -> Callable[[np.ndarray], np.ndarray]:
    def apply(x: np.ndarray) -> np.ndarray:
        import torch

        return getattr(torch, name)(torch.from_numpy(np.ascontiguousarray(x))).numpy()

    return apply


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "tanh": np.tanh,
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(10.0, x),
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "cbrt": np.cbrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "erf": _torch_unary("erf"),
    "erfc": _torch_unary("erfc"),
    "erfinv": _torch_unary("erfinv"),
    "lgamma": _torch_unary("lgamma"),
    "fabs": np.abs,
    "abs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.round,
    "rint": np.rint,
    "nearbyint": np.rint,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinited": np.isfinite,
    "finitef": np.isfinite,
    "signbit": np.signbit,
    "sigmoid": _sigmoid,
    "rcp": lambda x: 1.0 / x,
    "pow": np.power,
    "powf": np.power,
    "powi": np.power,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "max": np.maximum,
    "min": np.minimum,
    "fmod": np.fmod,
    "copysign": np.copysign,
    "fdim": lambda x, y: np.maximum(x - y, 0),
    "div": np.divide,
    "fdiv": np.divide,
    "fdivide": np.divide,
    "add": np.add,
    "mul": np.multiply,
    "sub": np.subtract,
    "fma": lambda x, y, z: x * y + z,
    "saturate": lambda x: np.clip(x, 0, 1),
}
_SUFFIXES = ("_rn", "_rz", "_rd", "_ru", "_ftz")


def _function(symbol: str) -> Callable[..., np.ndarray] | None:
    """`__nv_tanhf` → tanh, `__nv_fast_expf` → exp, `__nv_fdiv_rn` → divide, `__nv_powif` → power."""
    name = symbol.removeprefix("__nv_").removeprefix("__ocml_").removeprefix("fast_")
    for suffix in _SUFFIXES:
        name = name.removesuffix(suffix)
    for candidate in (name, name.removesuffix("f"), name.removesuffix("ll"), name.removesuffix("_f32")):
        if candidate in _FUNCTIONS:
            return _FUNCTIONS[candidate]
    return None


def _patch_libdevice() -> None:
    import triton.language as tl
    from triton.runtime import interpreter

    def create_extern_elementwise(
        self: Any, lib_name: str, lib_path: str, symbol: str, args: list[Any], ret_type: Any, is_pure: bool
    ) -> Any:
        function = _function(symbol)
        if function is None:
            raise InterpreterUnsupported(
                f"libdevice function {symbol} has no CPU version in kope's interpreter support"
            )
        dtype = interpreter._get_np_dtype(ret_type) if hasattr(interpreter, "_get_np_dtype") else None
        with np.errstate(all="ignore"):
            data = np.asarray(function(*[a.data for a in args]))
        if dtype is not None:
            data = data.astype(dtype)
        return interpreter.TensorHandle(data, ret_type.scalar if hasattr(ret_type, "scalar") else ret_type)

    interpreter.InterpreterBuilder.create_extern_elementwise = create_extern_elementwise
    modules = _libdevice_modules(tl)
    original = interpreter._patch_lang

    @functools.wraps(original)
    def patch_lang(fn: Any) -> Any:
        langs = _langs(fn, tl)
        if _patched and langs and langs <= _patched[-1]:
            return interpreter._LangPatchScope()  # a device function inside a launch that patched these
        scope = original(fn)
        if _patched:
            _patched[-1].update(langs)
        backend = modules[-1] if modules else None
        generic = getattr(getattr(tl, "extra", None), "libdevice", None)
        if generic is not None and backend is not None:
            for name in dir(generic):
                member = getattr(backend, name, None)
                if not name.startswith("_") and member is not None and tl.core.is_builtin(member):
                    interpreter._patch_attr(generic, name, member, interpreter.interpreter_builder, scope)
        for module in modules:
            interpreter._patch_builtin(module, interpreter.interpreter_builder, scope)
        return _owned(scope)

    interpreter._patch_lang = patch_lang
    _patch_launch(interpreter)


def _owned(scope: Any) -> Any:
    """A launch's own patches as they are; a device function's moved into its launch's, so they are undone when the
    launch ends (Triton's interpreter drops the scope of a device function's call: its patches of the language,
    say `tl.core` under a kernel that imports only `tl`, outlived the launch, and the GPU front end, which lowers
    the next launch with the language's own functions, met the interpreter's in their place)."""
    if not _scopes:
        return scope
    if _scopes[-1] is None:
        _scopes[-1] = scope
        return scope
    changes = getattr(scope, "_changes", None)
    owner = getattr(_scopes[-1], "_changes", None)
    if isinstance(changes, list) and isinstance(owner, list):
        owner.extend(changes)  # undone first (last in, first out), before the launch's own patches of the same names
        changes.clear()
    return scope


_scopes: list[Any] = []
"""Per launch in progress (innermost last): its patch scope, once its kernel's language is patched."""
_patched: list[set[int]] = []
"""Per launch in progress (innermost last): the ids of the `triton.language` modules already patched.

Triton's interpreter re-patches the whole language (`inspect.getmembers` over `tl`, `tl.core`, `tl.math`
and the tensor class) on every call of a `@triton.jit` device function, although the launch that calls it
has patched the same modules and restores them only when it ends: a quarter of a candidate job's time on
kernels with helper functions. The launch's patches stay in place while it runs, so a device function that
sees no other language module has nothing left to patch; one that does (say `tl.core` under a `tl`
kernel) is patched as before."""


def _langs(fn: Any, tl: Any) -> set[int]:
    """The language modules `_patch_lang` patches for `fn`: those among its globals."""
    namespace = getattr(fn, "__globals__", {})
    return {id(value) for value in namespace.values() if value is tl or value is tl.core}


def _patch_launch(interpreter: Any) -> None:
    """Mark each launch (`GridExecutor.__call__`, whose patch scope is restored when it returns)."""
    executor = interpreter.GridExecutor
    original = executor.__call__

    @functools.wraps(original)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        _patched.append(set())
        _scopes.append(None)
        try:
            return original(self, *args, **kwargs)
        finally:
            _patched.pop()
            _scopes.pop()

    executor.__call__ = call


def _libdevice_modules(tl: Any) -> list[Any]:
    modules: list[Any] = []
    with contextlib.suppress(ImportError, AttributeError):
        from triton.language.extra.hip import libdevice as hip

        modules.append(hip)
    with contextlib.suppress(ImportError, AttributeError):
        from triton.language.extra.cuda import libdevice as cuda

        modules.append(cuda)
    return modules
