"""Triton's GPU compiler front end, run on each interpreted launch (inside the sandbox, no GPU needed).

Triton's interpreter runs a kernel's Python: it takes what the GPU compiler refuses. A helper called from a
kernel without `@triton.jit`, `continue` and `break` in a loop, a module-level variable that is not a
`tl.constexpr`, a runtime value where a constant is needed, operands of types the compiler cannot combine: each
ran (often right) under `TRITON_INTERPRET=1` and fails to compile on a GPU, where the pipeline that wrote the
kernel saw it fail. Judged on the CPU, such a kernel was a `pass`, and a repair that only the interpreter ran was
accepted.

`check(fn, jit_options, args, kwargs)` lowers the launched kernel to Triton's IR for an NVIDIA target, as a GPU
launch does before it runs (the same binder, specialization and code generator; nothing runs, no driver is
touched), and raises `GpuCompileError` with the compiler's message where the front end refuses it. Each
(kernel, specialization) is checked once per process. Device functions the kernel calls are lowered with it: the
interpreter's wrappers of `@triton.jit` functions are seen as the jitted functions they wrap. Anything other than
a compilation error of the kernel's own code (a Triton version whose internals differ, a target it lacks) is no
verdict: the launch goes on, and `skipped()` says why.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Iterator
from typing import Any

TARGET = ("cuda", 90, 32)
"""The GPU the front end compiles for (an H100: the last targets' language is the same)."""


class GpuCompileError(RuntimeError):
    """The GPU compiler's front end refuses a kernel that the interpreter would run; `filename`, `lineno` and
    `line` are where (the innermost function's line it names), when the kernel's source is known."""

    def __init__(self, message: str, where: tuple[str, int, str] | None = None) -> None:
        super().__init__(message)
        self.filename, self.lineno, self.line = where or ("", 0, "")


_lock = threading.Lock()
_checked: dict[tuple[int, str], GpuCompileError | None] = {}
_sources: dict[str, tuple[str, int]] = {}
"""A jitted function's source (from its `def`) -> its file and the line of its `def`."""
_jitted: dict[int, Any] = {}
_skipped: list[str] = []


def skipped() -> list[str]:
    """Why launches went unchecked in this process (at most one reason each)."""
    with _lock:
        return list(_skipped)


def check(fn: Any, jit_options: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Lower the launch of `fn` (the kernel's Python function) for the GPU; raise `GpuCompileError` if refused."""
    from triton.compiler.errors import CompilationError

    name = getattr(fn, "__name__", "kernel")
    try:
        jit, backend, target = _compiler(fn, jit_options)
        bound, specialization, given = _binder(jit, backend)(*args, **kwargs)
        key = (id(fn), repr((specialization, sorted(given.items()))))
    except Exception as exc:  # no verdict: the front end could not be run, the launch goes on
        _skip(f"{name}: {type(exc).__name__}: {exc}"[:300])
        return
    with _lock:
        cached = _checked.get(key, _UNSEEN)
    if cached is None:
        return
    if isinstance(cached, GpuCompileError):
        raise GpuCompileError(str(cached), (cached.filename, cached.lineno, cached.line)) from cached.__cause__
    refused: GpuCompileError | None = None
    try:
        parsed, signature, constexprs, attrs = jit._pack_args(backend, dict(kwargs), bound, specialization, given)
        _lower(jit, backend, target, parsed, signature, constexprs, attrs)
    except CompilationError as exc:
        innermost = _innermost(exc)
        message = str(innermost.error_message or innermost).strip()
        if innermost.__cause__ is not None and str(innermost.__cause__).strip() not in message:
            message = f"{message}\n{type(innermost.__cause__).__name__}: {innermost.__cause__}".strip()
        refused = GpuCompileError(f"Triton's GPU compiler refuses `{name}`: {message}", _where(innermost))
        refused.__cause__ = exc  # what the front end met (kope's refusals of what cannot run here among it)
    except Exception as exc:  # no verdict, as above
        _skip(f"{name}: {type(exc).__name__}: {exc}"[:300])
        return
    with _lock:
        _checked[key] = refused
    if refused is not None:
        raise refused


_UNSEEN = object()


def _innermost(exc: Any) -> Any:
    """The last compilation error of the chain: the one raised where the code is (a call wraps its callee's)."""
    from triton.compiler.errors import CompilationError

    seen = {id(exc)}
    cause = exc.__cause__
    while isinstance(cause, CompilationError) and id(cause) not in seen:
        seen.add(id(cause))
        exc, cause = cause, cause.__cause__
    return exc


def _where(error: Any) -> tuple[str, int, str] | None:
    """The file, line and code a compilation error points at, from the source of the function it names."""
    lineno = getattr(getattr(error, "node", None), "lineno", None)
    with _lock:
        known = _sources.get(getattr(error, "src", None) or "")
    if known is None or not isinstance(lineno, int):
        return None
    filename, first = known
    lines = (error.src or "").splitlines()
    code = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    return filename, first + lineno - 1, code


def _skip(reason: str) -> None:
    with _lock:
        if reason not in _skipped and len(_skipped) < 5:
            _skipped.append(reason)


def _compiler(fn: Any, jit_options: dict[str, Any]) -> tuple[Any, Any, Any]:
    backend, target = _backend()
    return as_jit(fn, jit_options), backend, target


@functools.cache
def _backend() -> tuple[Any, Any]:
    """The NVIDIA backend and its target, made once per process (each launch is checked: a hot path)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    target = GPUTarget(*TARGET)
    return make_backend(target), target


_binders: dict[int, Any] = {}


def _binder(jit: Any, backend: Any) -> Any:
    from triton.runtime.jit import create_function_from_signature

    binder = _binders.get(id(jit))
    if binder is None:
        binder = _binders[id(jit)] = create_function_from_signature(jit.signature, jit.params, backend)
    return binder


def as_jit(fn: Any, jit_options: dict[str, Any]) -> Any:
    """The `JITFunction` the GPU would have made of `fn`, whose globals see jitted functions, not the
    interpreter's wrappers of them."""
    with _lock:
        made = _jitted.get(id(fn))
    if made is not None:
        return made
    from triton.runtime.jit import JITFunction

    class _Jitted(JITFunction):
        def get_capture_scope(self) -> dict[str, Any]:
            return {name: _unwrapped(value) for name, value in super().get_capture_scope().items()}

    made = _Jitted(fn, **{k: v for k, v in jit_options.items() if k in _JIT_OPTIONS})
    with _lock:
        _jitted[id(fn)] = made  # before its globals: functions that call each other
    made.__globals__ = {name: _unwrapped(value) for name, value in fn.__globals__.items()}
    with contextlib.suppress(Exception):  # where its lines are, for the message (none for a function without a file)
        before = next(i for i, line in enumerate(made.raw_src) if line.lstrip().startswith("def "))
        with _lock:
            _sources[made.src] = (fn.__code__.co_filename, made.starting_line_number + before)
    return made


_JIT_OPTIONS = ("version", "repr", "launch_metadata", "do_not_specialize", "do_not_specialize_on_alignment", "debug",
                "noinline")  # fmt: skip


def _unwrapped(value: Any) -> Any:
    """An interpreter's `@triton.jit` function as the `JITFunction` a GPU run has; anything else as it is."""
    from triton.runtime.interpreter import InterpretedFunction

    if isinstance(value, InterpretedFunction):
        return as_jit(value.fn, value.kwargs)
    return value


def _lower(jit: Any, backend: Any, target: Any, options: Any, signature: Any, constexprs: Any, attrs: Any) -> None:
    from triton._C.libtriton import ir
    from triton.compiler.compiler import ASTSource

    source = ASTSource(jit, signature, constexprs, attrs)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    codegen = backend.get_codegen_implementation(options)
    with _jitted_language():
        source.make_ir(target, options, codegen, backend.get_module_map(), context)


@contextlib.contextmanager
def _jitted_language() -> Iterator[None]:
    """Triton's own `@jit` functions (`tl.cdiv`, `tl.max`, `x.sum()`...) as a GPU run has them while the front end
    runs: under the interpreter they are its wrappers, which the code generator cannot lower."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    owners: list[Any] = [m for n, m in list(sys.modules.items()) if n.startswith("triton.language") and m is not None]
    owners.append(tl.core.tensor)
    swapped: list[tuple[Any, str, Any]] = []
    try:
        for owner in owners:
            for name, value in list(vars(owner).items()):
                if isinstance(value, InterpretedFunction):
                    swapped.append((owner, name, value))
                    setattr(owner, name, as_jit(value.fn, value.kwargs))
        yield
    finally:
        for owner, name, value in reversed(swapped):
            setattr(owner, name, value)
