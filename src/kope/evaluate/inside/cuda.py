"""CUDA emulated on the CPU interpreter (runs inside the sandbox; trusted code installs it before the
candidate is imported).

Most Triton kernels that models write are written for a GPU: `assert x.is_cuda`, `torch.empty(n,
device='cuda')`, `.cuda()`, `torch.cuda.get_device_properties(0).multi_processor_count`,
`triton.runtime.driver.active.utils.get_device_properties(...)`. On a machine without a GPU, kope runs
such a kernel in Triton's interpreter as it would run on one, and every verdict says so:

- every tensor the candidate sees reports CUDA device 0 (`is_cuda`, `device`, `get_device()`); a
  device it asks for (`'cuda'`, `'cuda:0'`, `torch.device('cuda')`, an index, `.cuda()`, `.to('cuda')`,
  a `torch.device('cuda')` context) allocates where the interpreter computes, the CPU;
- `torch.cuda` answers with the stated device below (`is_available`, `device_count`,
  `current_device`, `get_device_properties`, `get_device_name`, `get_device_capability`,
  `synchronize`, `Stream`, `Event`, `stream(...)`, `device(...)`, memory queries), and so does
  Triton's active driver (`get_current_device`, `get_current_stream`, `utils.get_device_properties`,
  `get_current_target`, `get_active_torch_device`);
- what cannot run here raises `UnsupportedHere` with the reason: a CUDA C++ extension (nvcc output
  does not run on the CPU), inline PTX (`tl.inline_asm_elementwise`), `torch.compile`, CUDA graphs.

A branch taken only off CUDA (`if not x.is_cuda: return torch.relu(x)`) is, as on a GPU, the path not
taken: the kernel is what gets judged, and the static rule `device-fallback` reports the branch.
Trusted code in the same process (kope's, safetensors') is answered truthfully: the tensors are on
the CPU. The emulation gives a candidate nothing a GPU would not: the gates watch whatever path runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

NOTE = "CUDA emulated on the CPU interpreter"
HINT = "run it on a GPU machine with --device cuda: CUDA emulation on the CPU cannot run it"
active: CudaEmulation | None = None
"""The emulation installed in this process, if any (one per candidate job)."""


@dataclasses.dataclass(frozen=True)
class StatedDevice:
    """What the emulated device says of itself (an H100-class GPU, stated, not measured)."""

    name: str = "kope CUDA emulation (Triton interpreter on the CPU)"
    multi_processor_count: int = 132
    total_memory: int = 80 * 1024**3
    major: int = 9
    minor: int = 0
    warp_size: int = 32
    max_shared_memory_per_block_optin: int = 232448
    max_threads_per_multi_processor: int = 2048
    regs_per_multiprocessor: int = 65536
    L2_cache_size: int = 50 * 1024**2
    clock_rate_khz: int = 1980000
    memory_clock_rate_khz: int = 2619000
    memory_bus_width: int = 5120

    @property
    def is_integrated(self) -> bool:
        return False

    @property
    def gcnArchName(self) -> str:
        return ""

    def triton_properties(self) -> dict[str, Any]:
        return {
            "max_shared_mem": self.max_shared_memory_per_block_optin,
            "max_num_regs": self.regs_per_multiprocessor,
            "multiprocessor_count": self.multi_processor_count,
            "warpSize": self.warp_size,
            "sm_clock_rate": self.clock_rate_khz,
            "mem_clock_rate": self.memory_clock_rate_khz,
            "mem_bus_width": self.memory_bus_width,
            "arch": f"sm{self.major}{self.minor}",
        }


DEVICE = StatedDevice()


class UnsupportedHere(RuntimeError):
    """What CUDA emulation on the CPU cannot run (the reason is the message)."""


_TRUSTED_ROOTS = (str(Path(__file__).resolve().parents[2]), "safetensors")
"""Callers answered truthfully: kope's own package and safetensors (they pack what the candidate returned)."""

_IS_CUDA = torch._C.TensorBase.is_cuda
_IS_CPU = torch._C.TensorBase.is_cpu
_DEVICE = torch._C.TensorBase.device
_CUDA = torch.device("cuda", 0)
_CPU = torch.device("cpu")


def _cuda_like(value: object) -> bool:
    if isinstance(value, torch.device):
        return value.type == "cuda"
    if isinstance(value, str):
        return value.strip().lower().split(":")[0] == "cuda"
    return isinstance(value, int) and not isinstance(value, bool)


def _trusted_caller() -> bool:
    """Whether the code that read the attribute is kope's or safetensors' (modes above this one are skipped:
    kope's recorder passes the candidate's own reads down to here)."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_code.co_name == "__torch_function__":
        frame = frame.f_back
    name = frame.f_code.co_filename if frame is not None else ""
    return name.startswith(_TRUSTED_ROOTS[0]) or _TRUSTED_ROOTS[1] in name


_ANSWERED = frozenset({"get_device", "cuda", "pin_memory", "record_stream", "to"})
"""The functions `_Emulation` answers or whose arguments it rewrites, beyond `device=` and `pin_memory=`."""


class _Emulation(TorchFunctionMode):
    """Answers device queries as CUDA device 0 and moves CUDA allocations to the CPU."""

    def __init__(self, used: set[str]) -> None:
        super().__init__()
        self.used = used

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        owner = getattr(func, "__self__", None)
        if owner is _IS_CUDA or owner is _IS_CPU or owner is _DEVICE:
            if _trusted_caller():
                return func(*args, **kwargs)
            self.used.add("tensor.is_cuda / tensor.device")
            return _CUDA if owner is _DEVICE else owner is _IS_CUDA
        name = getattr(func, "__name__", "")
        if name not in _ANSWERED and "device" not in kwargs and "pin_memory" not in kwargs:
            return func(*args, **kwargs)  # nothing below applies: most calls, kope's own among them
        if name == "get_device" and not _trusted_caller():
            return 0
        if name == "cuda" and args and isinstance(args[0], torch.Tensor):
            self.used.add("tensor.cuda()")
            return args[0]
        if name in ("pin_memory", "record_stream") and args and isinstance(args[0], torch.Tensor):
            return args[0] if name == "pin_memory" else None
        if name == "to" and args and isinstance(args[0], torch.Tensor):
            moved = [args[0]]
            for value in args[1:]:
                if _cuda_like(value):
                    self.used.add("tensor.to('cuda')")
                    value = _CPU
                moved.append(value)
            args = tuple(moved)
        if _cuda_like(kwargs.get("device")):
            self.used.add("device='cuda'")
            kwargs["device"] = _CPU
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        return func(*args, **kwargs)


class _TaskDevice(TorchFunctionMode):
    """A task file's own CUDA allocations and moves (`torch.rand(..., device='cuda')` in `get_inputs`, `.cuda()`,
    `.to('cuda')`) made on the ambient device: the CPU, or the meta device of a shapes probe when entered inside
    it. Trusted task code only: the reference answers nothing about devices, it computes where the job does."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        tensor = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if name == "cuda" and tensor is not None:
            return tensor
        if _cuda_like(kwargs.get("device")):
            del kwargs["device"]
        if name == "to" and tensor is not None:
            args = (tensor, *(a for a in args[1:] if isinstance(a, bool) or not _cuda_like(a)))
            if len(args) == 1 and "dtype" not in kwargs:  # moved nowhere (`non_blocking=` and the like alone)
                return tensor
        return func(*args, **kwargs)


@contextlib.contextmanager
def task_device(enabled: bool) -> Iterator[None]:
    """`_TaskDevice` while `enabled` (a job on the CPU that emulates CUDA); nothing otherwise."""
    if not enabled:
        yield
        return
    with _TaskDevice():
        yield


class _Stream:
    """A CUDA stream that is always idle: work on the CPU is done when the call returns."""

    def __init__(self, device: Any = None, priority: int = 0, **_: Any) -> None:
        self.device = _CUDA
        self.priority = priority
        self.cuda_stream = 0

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def wait_stream(self, stream: Any) -> None:
        return None

    def wait_event(self, event: Any) -> None:
        return None

    def record_event(self, event: Any = None) -> _Event:
        event = event if event is not None else _Event()
        event.record(self)
        return event

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class _Event:
    """A CUDA event that records the host clock (interpreter time, not GPU time)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self._at: float | None = None

    def record(self, stream: Any = None) -> None:
        self._at = time.perf_counter()

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def wait(self, stream: Any = None) -> None:
        return None

    def elapsed_time(self, end: _Event) -> float:
        if self._at is None or end._at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end._at - self._at) * 1000.0


_DEFAULT_STREAM = _Stream()


@contextlib.contextmanager
def _context(*args: Any, **kwargs: Any) -> Iterator[Any]:
    yield args[0] if args else None


def _unsupported(what: str, why: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise UnsupportedHere(f"{what}: {why}")

    return refuse


def _constant(value: Any) -> Callable[..., Any]:
    def answer(*args: Any, **kwargs: Any) -> Any:
        return value

    return answer


class _CudaModule:
    """The replacements for `torch.cuda`'s functions, each recording that the candidate used it."""

    def __init__(self, used: set[str]) -> None:
        self.used = used

    def members(self) -> dict[str, Any]:
        noop = _constant(None)
        answers: dict[str, Any] = {
            "is_available": _constant(True),
            "is_initialized": _constant(True),
            "init": noop,
            "_lazy_init": noop,
            "device_count": _constant(1),
            "current_device": _constant(0),
            "set_device": noop,
            "get_device_name": _constant(DEVICE.name),
            "get_device_capability": _constant((DEVICE.major, DEVICE.minor)),
            "get_device_properties": _constant(DEVICE),
            "get_arch_list": _constant([f"sm_{DEVICE.major}{DEVICE.minor}"]),
            "is_bf16_supported": _constant(True),
            "synchronize": noop,
            "empty_cache": noop,
            "ipc_collect": noop,
            "manual_seed": noop,
            "manual_seed_all": noop,
            "seed": noop,
            "seed_all": noop,
            "reset_peak_memory_stats": noop,
            "reset_max_memory_allocated": noop,
            "memory_allocated": _constant(0),
            "max_memory_allocated": _constant(0),
            "memory_reserved": _constant(0),
            "max_memory_reserved": _constant(0),
            "mem_get_info": _constant((DEVICE.total_memory, DEVICE.total_memory)),
            "Stream": _Stream,
            "Event": _Event,
            "current_stream": _constant(_DEFAULT_STREAM),
            "default_stream": _constant(_DEFAULT_STREAM),
            "stream": _context,
            "device": _context,
            "device_of": _context,
            "CUDAGraph": _unsupported("torch.cuda.CUDAGraph", "CUDA graphs need a GPU"),
            "graph": _unsupported("torch.cuda.graph", "CUDA graphs need a GPU"),
        }
        return {name: self._recorded(name, value) for name, value in answers.items()}

    def _recorded(self, name: str, value: Any) -> Any:
        if isinstance(value, type):
            return value
        used = self.used

        quiet = "seed" in name  # torch.manual_seed seeds CUDA too: the candidate did not ask

        def call(*args: Any, **kwargs: Any) -> Any:
            if not quiet:
                used.add(f"torch.cuda.{name}")
            return value(*args, **kwargs)

        call.__name__ = name
        return call


class _DriverUtils:
    def __init__(self, used: set[str]) -> None:
        self.used = used

    def get_device_properties(self, device: Any = 0) -> dict[str, Any]:
        self.used.add("triton driver: get_device_properties")
        return DEVICE.triton_properties()


class _Driver:
    """Triton's active driver as generated code queries it (`triton.runtime.driver.active`)."""

    def __init__(self, used: set[str]) -> None:
        self.utils = _DriverUtils(used)

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        return None

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_active_torch_device(self) -> torch.device:
        return _CUDA

    def get_device_interface(self) -> types.ModuleType:
        return torch.cuda

    def get_current_target(self) -> Any:
        from triton.backends.compiler import GPUTarget

        return GPUTarget("cuda", DEVICE.major * 10 + DEVICE.minor, DEVICE.warp_size)

    def get_benchmarker(self) -> Callable[..., Any]:
        return _unsupported("the driver's benchmarker", "timing belongs to a GPU run")

    def get_empty_cache_for_benchmark(self) -> torch.Tensor:
        return torch.empty(0)

    def clear_cache(self, cache: Any) -> None:
        return None


class CudaEmulation:
    """Installed once per candidate job; `used()` says what the candidate asked of CUDA."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._mode = _Emulation(self._used)
        self._installed = False

    def install(self) -> None:
        global active
        if self._installed:
            return
        self._installed = True
        active = self
        for name, value in _CudaModule(self._used).members().items():
            setattr(torch.cuda, name, value)
        torch.compile = _unsupported("torch.compile", "compiled PyTorch graphs do not run under the interpreter")
        self._refuse_cuda_extensions()
        self._refuse_inline_asm()
        self._inductor_entry_points()
        with contextlib.suppress(ImportError, AttributeError):
            config = importlib.import_module("triton.runtime.driver").driver
            config.set_active(_Driver(self._used))
        self._mode.__enter__()

    def used(self) -> list[str]:
        return sorted(self._used)

    @staticmethod
    def _refuse_cuda_extensions() -> None:
        from torch.utils import cpp_extension

        for name in ("load_inline", "load"):
            original = getattr(cpp_extension, name)
            setattr(cpp_extension, name, _cuda_source_refused(name, original))

    def _inductor_entry_points(self) -> None:
        """What code in the form PyTorch's inductor writes (as models fine-tuned on it write it) asks of a CUDA build
        of PyTorch, whose CPU build lacks it: the raw stream, an allocation on the device, and the launch-grid helper
        `triton_heuristics.grid` that PyTorch 2.6 removed (each recorded when called)."""
        used = self._used

        def raw_stream(device: int = 0) -> int:
            used.add("torch._C._cuda_getCurrentRawStream")
            return 0

        def empty_strided_cuda(size: Any, stride: Any, dtype: torch.dtype) -> torch.Tensor:
            used.add("torch._C._dynamo.guards._empty_strided_cuda")
            return torch.empty_strided(size, stride, dtype=dtype, device="cuda")

        if not hasattr(torch._C, "_cuda_getCurrentRawStream"):
            torch._C._cuda_getCurrentRawStream = raw_stream
        with contextlib.suppress(ImportError, AttributeError):
            torch._C._dynamo.guards._empty_strided_cuda = empty_strided_cuda  # type: ignore[attr-defined]
        loaded = sys.modules.get(_HEURISTICS)
        if loaded is not None:
            _add_grid(loaded, used)
        else:  # importing inductor costs a second a job: only when the candidate imports it
            sys.meta_path.insert(0, _GridFinder(used))

    @staticmethod
    def _refuse_inline_asm() -> None:
        import triton.language as tl

        refuse = _unsupported("inline PTX (tl.inline_asm_elementwise)", "GPU assembly does not run on the CPU")
        for module in (tl, tl.core):
            if hasattr(module, "inline_asm_elementwise"):
                module.inline_asm_elementwise = refuse


_HEURISTICS = "torch._inductor.runtime.triton_heuristics"


def _add_grid(module: types.ModuleType, used: set[str]) -> None:
    if not hasattr(module, "grid"):
        module.grid = _legacy_grid(used)  # type: ignore[attr-defined]


class _GridFinder(importlib.abc.MetaPathFinder):
    """Finds inductor's `triton_heuristics` as Python does, and gives the module `grid` once it has run."""

    def __init__(self, used: set[str]) -> None:
        self.used = used

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != _HEURISTICS:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        loader = spec.loader if spec is not None else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        used, run = self.used, loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            run(module)
            _add_grid(module, used)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _legacy_grid(used: set[str]) -> Callable[..., Callable[[dict[str, Any]], tuple[int, int, int]]]:
    """Inductor's launch-grid helper as PyTorch 2.5 had it: `grid(xnumel)`, `grid(ynumel, xnumel)`,
    `grid(znumel, ynumel, xnumel)` give a function of the launch's meta-parameters that counts `XBLOCK` (1 when the
    launch has none) / `YBLOCK` / `ZBLOCK` blocks of each size along axes 0, 1, 2 (a size without its block: one
    program per element; an axis without a size: one program)."""

    def grid(*numels: int) -> Callable[[dict[str, Any]], tuple[int, int, int]]:
        used.add("torch._inductor.runtime.triton_heuristics.grid (PyTorch < 2.6)")
        if not 1 <= len(numels) <= 3:
            raise ValueError(f"grid() takes one to three sizes, not {len(numels)}")
        sizes = [*reversed(numels), None, None][:3]

        def count(numel: int | None, block: int | None) -> int:
            if numel is None:
                return 1
            return numel if block is None else -(-int(numel) // int(block))

        def of(meta: dict[str, Any]) -> tuple[int, int, int]:
            blocks = (meta.get("XBLOCK", 1), meta.get("YBLOCK"), meta.get("ZBLOCK"))
            x, y, z = (count(numel, block) for numel, block in zip(sizes, blocks, strict=True))
            return x, y, z

        return of

    return grid


def _cuda_source_refused(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """`load_inline(cuda_sources=...)` and `load(sources=[... .cu])` are refused; C++ for the CPU builds."""

    def load(*args: Any, **kwargs: Any) -> Any:
        if name == "load_inline":
            cuda = kwargs.get("cuda_sources", args[2] if len(args) > 2 else None)
            if cuda:
                raise UnsupportedHere("a CUDA C++ extension (load_inline with cuda_sources): nvcc output needs a GPU")
        else:
            sources = kwargs.get("sources", args[1] if len(args) > 1 else [])
            sources = [sources] if isinstance(sources, str) else list(sources or [])
            if any(str(s).endswith((".cu", ".cuh")) for s in sources):
                raise UnsupportedHere("a CUDA C++ extension (.cu sources): nvcc output needs a GPU")
        return original(*args, **kwargs)

    return load


def is_emulation(mode: object) -> bool:
    """Whether `mode` is the function mode of the emulation this process installed (kope's, not a look-alike)."""
    return active is not None and mode is active._mode


def is_unsupported(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) is something the emulation cannot run."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, UnsupportedHere):
            return True
        current = current.__cause__ or current.__context__
    return False
