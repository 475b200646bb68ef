"""What runs inside a sandboxed process: a task's plan, its reference, or a candidate.

- `plan` executes the task file and reports its cases, size parameters and tolerances.
- `reference` builds the task's inputs and init arguments (seeded) and the reference `Model`,
  saves them, runs the model natively (for output dtypes and timing) and in float64 where inputs
  are floating point (for the values candidates are compared with).
- `candidate` loads the candidate file, builds `ModelNew` from the init arguments the reference
  job saved, copies in the reference's parameters (by name, else by a shape only one tensor on each side has, else
  transposed), and runs it on
  the saved inputs. It never sees the task module, the reference outputs or the comparison.
- `shapes` reports the inputs a task makes under several sets of overrides, without allocating
  them, and optionally whether the reference runs on them (`kope.evaluate.inside.shapes`).

Uninitialised memory is poisoned in candidate runs: PyTorch's deterministic mode with
`fill_uninitialized_memory` fills every `torch.empty*` allocation with NaN (integers with their
maximum), on the CPU and on CUDA, so output elements a kernel never wrote cannot match.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import os
import re
import sys
import time
import traceback
import types
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from kope import protocol
from kope.evaluate.inside import cuda, frontend, interpreter, shapes, tensors, timing
from kope.evaluate.inside.channel import Channel, FeedRefused, UnsupportedValueError, plain
from kope.evaluate.inside.state import same_state_each_call
from kope.protocol import JobSpec, PlanInfo, TrialRecord, WorkerError, WorkerResult

_TASK_MODULE = "kope_task"
_CANDIDATE_MODULE = "kope_candidate"
_TRACEBACK_LINES = 25


def preload() -> None:
    """Import what jobs need, before the fork server starts forking (never runs task code).

    Every job is a fork of the server, so what is imported here is imported once per server instead
    of once per job. Beyond torch and triton that is what every candidate job with the gates on imports:
    the monitor (with `numpy.testing` among what it watches), `torch.utils.cpp_extension` (it wraps
    `load_inline`; importing it imports setuptools) and the Gluon modules triton imports at a kernel's
    first launch: about 0.4 s of each candidate job on this 2-core machine (`benchmarks/eval_stages.py`).
    """
    import numpy
    import numpy.testing
    import safetensors.torch  # noqa: F401
    import torch.utils.cpp_extension  # noqa: F401
    import triton
    import triton.language

    import kope.evaluate.inside.monitor  # noqa: F401

    with contextlib.suppress(ImportError):  # older or trimmed triton builds
        import triton.runtime.interpreter
    with contextlib.suppress(ImportError):
        import triton.experimental.gluon.language
    _ = triton.__version__, numpy.__version__


def run_job(job_dir: Path) -> int:
    """Run the job of `job_dir`. A candidate job sends its results through the sealed channel and ends
    this process with SIGKILL (`kope.evaluate.inside.channel`); the other jobs run trusted task code and
    write `result.json` into the job directory."""
    sealed = Channel.open()  # before any task or candidate code: it takes the channel's key
    spec = JobSpec.model_validate_json((job_dir / protocol.SPEC_FILE).read_text())
    if spec.device.startswith("cpu"):
        os.environ["TRITON_INTERPRET"] = "1"
    sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
    if spec.mode == "candidate":
        if sealed is None:
            raise RuntimeError("candidate jobs run only in a supervised worker, which sends results sealed")
        sealed.seal(_candidate(spec, job_dir, sealed), protocol.RESULT_FILE)
    runner = {"plan": _plan, "reference": _reference, "shapes": shapes.run}[spec.mode]
    with cuda.task_device(spec.cuda_emulation):  # a task written for a GPU (`device='cuda'` in get_inputs)
        result = runner(spec, job_dir)
    _write_result(job_dir, result)
    return 0


def _write_result(job_dir: Path, result: WorkerResult) -> None:
    tmp = job_dir / (protocol.RESULT_FILE + ".tmp")
    tmp.write_text(result.model_dump_json())
    os.replace(tmp, job_dir / protocol.RESULT_FILE)


def _exec_task(spec: JobSpec) -> types.ModuleType:
    assert spec.task_source is not None
    path = spec.task_path or "<task>"
    module = types.ModuleType(_TASK_MODULE)
    module.__file__ = path
    sys.modules[_TASK_MODULE] = module
    exec(compile(spec.task_source, path, "exec"), module.__dict__)
    return module


def _task_error(stage: str) -> WorkerResult:
    exc = sys.exc_info()[1]
    return WorkerResult(
        mode="reference",
        error=WorkerError(kind="task", message=f"{stage}: {type(exc).__name__}: {exc}", traceback=_tail()),
    )


def _plan(spec: JobSpec, job_dir: Path) -> WorkerResult:
    try:
        module = _exec_task(spec)
    except Exception:
        return _task_error("executing the task file failed").model_copy(update={"mode": "plan"})
    plan = PlanInfo()
    get_cases = getattr(module, "get_cases", None)
    if callable(get_cases):
        try:
            cases = get_cases()
            plan.cases = list(cases) if isinstance(cases, list | tuple) else cases
        except Exception:
            return _task_error("get_cases() failed").model_copy(update={"mode": "plan"})
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, bool):
            continue
        if isinstance(value, int) or (
            isinstance(value, tuple | list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            plan.sizes[name] = value
    chosen = getattr(module, "INTEGRITY_POLICY", None)
    if chosen in ("strict", "partial"):
        plan.integrity_policy = chosen
    allow = getattr(module, "ALLOW_TORCH", None)
    if isinstance(allow, list | tuple | set | frozenset):
        plan.allow_torch = sorted(str(name) for name in allow)
    tolerances = getattr(module, "TOLERANCES", None)
    if isinstance(tolerances, dict):
        plan.tolerances = {str(k).removeprefix("torch."): _plain(v) for k, v in tolerances.items()}
    try:
        return WorkerResult(mode="plan", plan=plan)
    except ValueError:
        return WorkerResult(
            mode="plan", error=WorkerError(kind="task", message="get_cases() returned values that are not plain data")
        )


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _as_device(value: Any, device: str, *, double: bool = False) -> Any:
    if isinstance(value, torch.Tensor):
        moved = value.to(device)
        if double and moved.is_floating_point():
            moved = moved.to(torch.float64)
        return moved
    if isinstance(value, list | tuple):
        items = [_as_device(v, device, double=double) for v in value]
        return type(value)(items) if isinstance(value, tuple) else items
    return value


def _synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _reference(spec: JobSpec, job_dir: Path) -> WorkerResult:
    device = spec.device
    try:
        module = _exec_task(spec)
        torch.manual_seed(spec.init_seed)
        init_inputs = list(module.get_init_inputs())
        tensors.save(job_dir / protocol.INIT_FILE, init_inputs)
        torch.manual_seed(spec.init_seed)
        with _OperatorTrace() as init_trace:
            model = module.Model(*init_inputs)
        state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
        from safetensors.torch import save_file

        save_file(state, str(job_dir / protocol.STATE_FILE))
        model = model.to(device).train(spec.module_mode == "train")
        same_state_each_call(model)
    except Exception:
        return _task_error("building the reference model failed")
    result = WorkerResult(mode="reference")
    model64: torch.nn.Module | None = None
    first_inputs: list[Any] | None = None
    for index, seed in enumerate(spec.trial_seeds):
        try:
            torch.manual_seed(seed)
            inputs = shapes.transform_inputs(
                list(module.get_inputs()), spec.input_scale, spec.input_shift, spec.input_pattern
            )
            input_meta = tensors.save(job_dir / protocol.inputs_file(index), inputs)
            if index == 0:
                result.inputs = input_meta
                result.input_bytes = sum(t.nbytes for t in inputs if isinstance(t, torch.Tensor))
            on_device = _as_device(inputs, device)
            first_inputs = first_inputs if first_inputs is not None else on_device
            began = time.perf_counter()
            if index == 0:
                fed = copy.deepcopy(on_device)
                with torch.no_grad(), _OperatorTrace(fed) as trace:
                    native = model(*fed)
                result.reference_ops = trace.ops
                result.reference_random = _random_draw(model, on_device, native, trace.random, seed)
                result.reference_inputs_read = sorted(trace.inputs_read)
                result.reference_init_ops = init_trace.ops
            else:
                with torch.no_grad():
                    native = model(*copy.deepcopy(on_device))
            _synchronize(device)
            seconds = time.perf_counter() - began
        except Exception:
            return _task_error(f"the reference failed on trial {index}")
        value = native
        if result.precision == "float64":
            try:
                if model64 is None:
                    model64 = copy.deepcopy(model).to(torch.float64)
                with torch.no_grad():
                    value = model64(*_as_device(inputs, device, double=True))
            except Exception:
                result.precision = "native"
                value = native
        try:
            native_meta, _ = tensors.pack(native)
            tensors.save(job_dir / protocol.outputs_file(index), _to_float64(value), for_numpy=True)
        except tensors.UnsupportedValueError as exc:
            return WorkerResult(mode="reference", error=WorkerError(kind="task", message=f"reference output: {exc}"))
        result.trials.append(TrialRecord(index=index, outputs=native_meta, seconds=seconds))
        if index == 0:
            result.output_bytes = _nbytes(native)
    if device.startswith("cuda"):
        result.device_name = torch.cuda.get_device_name()
    if spec.timing and first_inputs is not None:
        result.timing_ms, result.timing_runs, result.timing_method = _time_forward(model, [first_inputs], spec)
    return result


class _OperatorTrace(TorchFunctionMode):
    """The PyTorch compute operations the reference calls, and which of its inputs they read."""

    def __init__(self, inputs: list[Any] | None = None) -> None:
        super().__init__()
        self.ops: list[str] = []
        self.random: list[str] = []
        self.inputs_read: set[int] = set()
        self._inputs = {id(v): i for i, v in enumerate(inputs or []) if isinstance(v, torch.Tensor)}

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        from kope.protocol import policy

        kwargs = kwargs or {}
        name = policy.short_name(func)
        if name not in policy.QUERIES:
            for value in (*args, *kwargs.values()):
                index = self._inputs.get(id(value))
                if index is not None:
                    self.inputs_read.add(index)
        if not policy.allowed(name) and name not in policy.FILLS and name not in self.ops:
            self.ops.append(name)
        if name in policy.RANDOM_DRAWS and name not in self.random:
            self.random.append(name)
        return func(*args, **kwargs)


def _random_draw(model: torch.nn.Module, inputs: list[Any], native: Any, drawn: list[str], seed: int) -> str | None:
    """The random operation a reference's forward called, when a second run on the same inputs, seeded otherwise,
    gives other values (a dropout in training mode); None when it drew nothing or its values do not depend on it."""
    if not drawn:
        return None
    torch.manual_seed(seed + 1_000_003)
    with torch.no_grad():
        again = model(*copy.deepcopy(inputs))
    try:
        (meta, first), (meta_again, second) = tensors.pack(native), tensors.pack(again)
    except tensors.UnsupportedValueError:
        return None
    same = meta == meta_again and all(torch.equal(first[k].cpu(), second[k].cpu()) for k in first)
    return None if same else drawn[0]


def _nbytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return int(value.nbytes)
    if isinstance(value, list | tuple):
        return sum(_nbytes(v) for v in value)
    return 0


def _to_float64(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(torch.float64) if value.is_floating_point() else value
    if isinstance(value, list | tuple):
        return type(value)(_to_float64(v) for v in value)
    if isinstance(value, float):
        return value
    return value


def _time_forward(model: torch.nn.Module, input_sets: list[list[Any]], spec: JobSpec) -> tuple[float, int, Any]:
    def call(index: int) -> object:
        with torch.no_grad():
            return model(*input_sets[index % len(input_sets)])

    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    return timing.measure(call, device=spec.device, interpreted=interpreted, budget_ms=spec.timing_budget_ms)


def _poison_uninitialized_memory() -> None:
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    fill = getattr(torch._C, "_set_deterministic_fill_uninitialized_memory", None)
    if setter is not None and fill is not None:
        setter(True, warn_only=True)
        fill(True)
    else:  # pragma: no cover - public API, slower (imports inductor)
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]


def _candidate_error(kind: str, message: str, with_traceback: bool = True) -> WorkerResult:
    return WorkerResult(
        mode="candidate",
        error=WorkerError(kind=kind, message=message, traceback=_tail() if with_traceback else None),  # type: ignore[arg-type]
    )


def _load_candidate(spec: JobSpec, job_dir: Path) -> tuple[type[torch.nn.Module] | None, WorkerResult | None]:
    path = job_dir / protocol.CANDIDATE_FILE
    source = path.read_text(errors="replace")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        return None, _candidate_error("syntax", f"line {exc.lineno}: {exc.msg}", with_traceback=False)
    except ValueError as exc:
        return None, _candidate_error("syntax", str(exc), with_traceback=False)
    module = types.ModuleType(_CANDIDATE_MODULE)
    module.__file__ = str(path)
    sys.modules[_CANDIDATE_MODULE] = module
    try:
        exec(code, module.__dict__)
    except ImportError as exc:
        return None, _candidate_error("import", f"{type(exc).__name__}: {exc}")
    except Exception as exc:
        return None, _classified("load", exc, "executing the candidate module failed")
    for name, (own, value) in spec.size_globals.items():
        copied = module.__dict__.get(name)
        if type(copied) in (int, float, bool, tuple, list) and _as_tuples(copied) == _as_tuples(own):
            # the task's own value (plain data, never the candidate's objects): a copy of its globals, given the case's
            module.__dict__[name] = tuple(_as_tuples(value)) if isinstance(copied, tuple) else value
    model_new = module.__dict__.get("ModelNew")
    if not isinstance(model_new, type) or not issubclass(model_new, torch.nn.Module):
        return None, _candidate_error("load", "the candidate does not define class ModelNew(nn.Module)", False)
    return model_new, None


def _as_tuples(value: Any) -> Any:
    """Lists as tuples, all the way down (a size that crossed JSON compares equal to the tuple it was)."""
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list | tuple) else value


def _classified(kind: str, exc: BaseException, stage: str) -> WorkerResult:
    text = f"{type(exc).__name__}: {exc}"
    if cuda.is_unsupported(exc):
        failure = _candidate_error("unsupported", f"{stage}: {text}")
        assert failure.error is not None
        failure.error.hint = cuda.HINT
        return failure
    if interpreter.interpreting() and interpreter.is_unsupported(exc):
        failure = _candidate_error("interpreter", f"{stage}: {text}")
        assert failure.error is not None
        failure.error.hint = interpreter.HINT
        return failure
    if isinstance(exc, MemoryError) or "out of memory" in text.lower() or "can't allocate memory" in text:
        return _candidate_error("memory", f"{stage}: {text}")
    if isinstance(exc, OSError) and exc.errno in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        return _candidate_error("disk", f"{stage}: {text} (the job's disk limit)")
    where = _candidate_line(exc) if str(exc) else ""  # a bare exception gets its line from the parent (failures.py)
    return _candidate_error(kind, f"{stage}: {text}{where}")


_SIZE_GUARD = re.compile(r"expected size \d+==\d+, stride \d+==\d+|wrong number of dimensions\d+")
"""What PyTorch's `assert_size_stride` says (the guard inductor-style code opens each call with) when a tensor does
not have the sizes and strides the code was generated for."""


def _own_sizes_only(failure: WorkerResult, exc: BaseException, spec: JobSpec) -> None:
    """A candidate that guards the task's own sizes (`assert_size_stride(x, (16, 4096), (4096, 1))`) stopped by its
    guard on a case of other sizes: it cannot be judged on that case, which says nothing of its values. The error
    becomes `unsupported`, with the hint to judge it at the task's own sizes (on the task's own sizes the guard holds,
    and a failure there stays the candidate's)."""
    if failure.error is None or not spec.other_sizes or not isinstance(exc, AssertionError):
        return
    if _SIZE_GUARD.search(str(exc)[:2000]) is None:
        return
    failure.error.kind = "unsupported"
    failure.error.message = f"{failure.error.message} (a guard of the task's own sizes, on a case of other sizes)"
    failure.error.hint = (
        "the kernel runs at the task's own sizes only (its size guard): judge it at them, on a GPU with --device "
        "cuda where they do not fit the CPU's budget"
    )


def _candidate_line(exc: BaseException) -> str:
    """` (candidate line N: <code>)`: the deepest line of the candidate's file the failure passed through, in the
    innermost exception of its chain that has one (the interpreter re-raises a kernel's error from the launch, so
    the kernel's own line is only in the cause), or the kernel's line the GPU compiler refuses; "" when none is."""
    found: tuple[int, str] | None = None
    seen: set[int] = set()
    chained: BaseException | None = exc
    try:
        while chained is not None and id(chained) not in seen and len(seen) < 8:
            seen.add(id(chained))
            for frame in traceback.extract_tb(BaseException.__dict__["__traceback__"].__get__(chained)):
                if Path(frame.filename).name == protocol.CANDIDATE_FILE and frame.lineno:
                    found = (frame.lineno, (frame.line or "").strip())  # the deepest, of the innermost cause
            if type(chained) is frontend.GpuCompileError and Path(chained.filename).name == protocol.CANDIDATE_FILE:
                found = (chained.lineno, chained.line)  # the kernel's line that the GPU compiler refuses
            cause = BaseException.__dict__["__cause__"].__get__(chained)
            chained = cause if isinstance(cause, BaseException) else None
    except Exception:  # a hostile exception object: say nothing more than its message
        return ""
    if found is None:
        return ""
    return f" (candidate line {found[0]}: {found[1][:120]})"


def _same_but_ones(own: torch.Tensor, value: torch.Tensor) -> bool:
    """Another shape that differs only by dimensions of size one (a bias kept as `(1,)` for `(1, 1, 1, 1)`, or as
    `(C, 1)` for `(C,)`), of the same dtype: the same values in the same order, reshaped."""
    if own.shape == value.shape or own.dtype != value.dtype:
        return False
    return [d for d in own.shape if d != 1] == [d for d in value.shape if d != 1]


def _copy_reference_state(
    model: torch.nn.Module, job_dir: Path, known: Sequence[tuple[str, str, bool]] = ()
) -> tuple[list[str], list[tuple[str, str, bool]]]:
    """Copy the reference's parameters and buffers into the candidate; the candidate's names of those copied, and
    the pairs (reference name, candidate name, transposed) that one tensor each was copied by.

    First the `known` pairs (the evaluation's first case's, `JobSpec.parameter_pairs`) that still fit. Then by name
    where name, shape and dtype agree (or the shapes differ only by dimensions of size one: reshaped); then
    by the name's words and layer index where exactly one
    tensor on each side has them (`gru.weight_hh_l2` is `weight_hh.2` or `W_hh[2]`, as a stored transpose
    too); then tensors that already hold the same values, one on each side (a norm's weight of ones that the
    model built as `gn_weight`), which leaves fewer of a shape to tell apart; then, for tensors models renamed
    (`self.gemm.weight` became `self.weight`), by shape where exactly one tensor left on each side has it; then
    a 2-D tensor stored transposed (`weight_t`, shape (in, out)) where exactly one left on each side has the
    transposed shape; last, a 2-D reference tensor the model split into consecutive pieces (`i2h.weight` of a
    Linear over `cat((x, h), dim=1)` kept as `W_x` and `W_h`), where exactly one run of them fits."""
    from safetensors.torch import load_file

    reference = load_file(str(job_dir / protocol.STATE_FILE))
    own = model.state_dict()
    pairs = _known_pairs(reference, own, known)
    free = {
        n: v for n, v in reference.items() if n in own and n not in {r for r, _, _ in pairs} | {o for _, o, _ in pairs}
    }
    pairs += [(n, n, False) for n, v in free.items() if _same_kind(own[n], v, v.shape)]
    pairs += [(n, n, False) for n, v in free.items() if _same_but_ones(own[n], v)]
    pairs += _pairs_by_words(reference, own, pairs)
    pairs += _pairs_by_value(reference, own, pairs)
    for transposed in (False, True):
        left_ref, left_own = _unpaired(reference, own, pairs)
        for ref_name, value in left_ref.items():
            shape = _transposed_shape(value) if transposed else value.shape
            if shape is None:
                continue
            same_ref = [v for v in left_ref.values() if v.shape == value.shape and v.dtype == value.dtype]
            same_own = [n for n, t in left_own.items() if _same_kind(t, value, shape)]
            if len(same_ref) == 1 and len(same_own) == 1:
                pairs.append((ref_name, same_own[0], transposed))
    loaded: list[str] = []
    with torch.no_grad():
        for ref_name, own_name, transposed in pairs:
            value = reference[ref_name]
            own[own_name].copy_(value.t() if transposed else value.reshape(own[own_name].shape))
            loaded.append(own_name)
        for ref_name, pieces, dim in _split_pieces(reference, own, pairs):
            parts = reference[ref_name].split([own[n].shape[dim] for n in pieces], dim)
            for own_name, part in zip(pieces, parts, strict=True):
                own[own_name].copy_(part)
                loaded.append(own_name)
    return loaded, pairs


def _known_pairs(
    reference: dict[str, torch.Tensor], own: dict[str, torch.Tensor], known: Sequence[tuple[str, str, bool]]
) -> list[tuple[str, str, bool]]:
    """The pairs of an earlier case that fit this case's tensors: both names present, unclaimed by an earlier pair,
    of the same dtype and the same shape (transposed where the pair says so, or up to dimensions of size one)."""
    pairs: list[tuple[str, str, bool]] = []
    used_ref: set[str] = set()
    used_own: set[str] = set()
    for ref_name, own_name, transposed in known:
        value, tensor = reference.get(ref_name), own.get(own_name)
        if value is None or tensor is None or ref_name in used_ref or own_name in used_own:
            continue
        if not (value.is_floating_point() and tensor.is_floating_point()):
            continue
        shape = _transposed_shape(value) if transposed else value.shape
        fits = shape is not None and _same_kind(tensor, value, shape)
        if fits or (not transposed and _same_but_ones(tensor, value)):
            pairs.append((ref_name, own_name, transposed))
            used_ref.add(ref_name)
            used_own.add(own_name)
    return pairs


def _unpaired(
    reference: dict[str, torch.Tensor], own: dict[str, torch.Tensor], taken: list[tuple[str, str, bool]]
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """The floating-point tensors of each side that no pair in `taken` holds yet."""
    used_ref, used_own = {r for r, _, _ in taken}, {o for _, o, _ in taken}
    left_ref = {n: v for n, v in reference.items() if n not in used_ref and v.is_floating_point()}
    left_own = {n: v for n, v in own.items() if n not in used_own and v.is_floating_point()}
    return left_ref, left_own


def _split_pieces(
    reference: dict[str, torch.Tensor], own: dict[str, torch.Tensor], taken: list[tuple[str, str, bool]]
) -> list[tuple[str, list[str], int]]:
    """Reference 2-D tensors left unpaired that the model keeps in pieces: a run of two or more 2-D tensors, next
    to each other in the model's order and all left unpaired, that concatenated along one dimension have the
    reference's shape (and dtype), in that order; only where exactly one run fits a reference tensor and no
    other reference tensor claims a piece of it. (reference name, candidate names in order, dimension)."""
    left_ref, left_own = _unpaired(reference, own, taken)
    names = list(own)
    left = [n in left_own and own[n].dim() == 2 for n in names]
    found: list[tuple[str, list[str], int]] = []
    for ref_name, value in left_ref.items():
        if value.dim() != 2:
            continue
        runs: list[tuple[list[str], int]] = []
        for dim in (0, 1):
            other = 1 - dim
            for start in range(len(names)):
                run: list[str] = []
                total = 0
                for at in range(start, len(names)):
                    tensor = own[names[at]]
                    if not left[at] or tensor.dtype != value.dtype or tensor.shape[other] != value.shape[other]:
                        break
                    run.append(names[at])
                    total += tensor.shape[dim]
                    if total >= value.shape[dim]:
                        break
                if len(run) >= 2 and total == value.shape[dim]:
                    runs.append((run, dim))
        if len(runs) == 1:
            found.append((ref_name, *runs[0]))
    claimed = Counter(n for _, run, _ in found for n in run)
    return [(r, run, dim) for r, run, dim in found if all(claimed[n] == 1 for n in run)]


_WORD_ALIASES = {"w": "weight", "b": "bias"}


def _name_words(name: str) -> tuple[str, ...]:
    """A state name as lower-case words, a layer index as its number: `gru.weight_ih_l0` is
    (gru, weight, ih, 0), `W_ih.0` is (weight, ih, 0)."""
    words = []
    for word in name.replace(".", "_").lower().split("_"):
        if len(word) > 1 and word[0] == "l" and word[1:].isdigit():
            word = word[1:]
        if word:
            words.append(_WORD_ALIASES.get(word, word))
    return tuple(words)


def _flat_direction(words: tuple[str, ...]) -> tuple[str, ...]:
    """A bidirectional layer's words with (layer, direction) as one index, `2 * layer + reverse`, as models
    number the tensors of `nn.GRU(..., bidirectional=True)` in one list."""
    reverse = words[-1:] == ("reverse",)
    body = words[:-1] if reverse else words
    index = next((i for i in range(len(body) - 1, -1, -1) if body[i].isdigit()), None)
    if index is None:
        return words
    return (*body[:index], str(2 * int(body[index]) + int(reverse)), *body[index + 1 :])


def _pairs_by_words(
    reference: dict[str, torch.Tensor], own: dict[str, torch.Tensor], taken: list[tuple[str, str, bool]]
) -> list[tuple[str, str, bool]]:
    """Reference and candidate tensors whose names have the same words, a module prefix aside (one name's
    words end the other's), pairing only where each has exactly one such partner of its shape or transposed
    shape, and the names carry a layer index or two words at least (so `weight` alone never pairs)."""
    left_ref, left_own = _unpaired(reference, own, taken)
    own_words = {n: _name_words(n) for n in left_own}

    def fits(ref_words: tuple[str, ...], words: tuple[str, ...]) -> bool:
        short, long = sorted((ref_words, words), key=len)
        informative = len(short) >= 2 or any(w.isdigit() for w in short)
        return informative and long[len(long) - len(short) :] == short

    def pairing(key: Callable[[str], tuple[str, ...]]) -> list[tuple[str, str, bool]]:
        matches: dict[str, list[tuple[str, bool]]] = {}
        for ref_name, value in left_ref.items():
            found = matches.setdefault(ref_name, [])
            for name, words in own_words.items():
                if not fits(key(ref_name), words):
                    continue
                if _same_kind(left_own[name], value, value.shape):
                    found.append((name, False))
                elif (shape := _transposed_shape(value)) is not None and _same_kind(left_own[name], value, shape):
                    found.append((name, True))
        claimed = Counter(name for found in matches.values() for name, _ in found)
        return [(r, f[0][0], f[0][1]) for r, f in matches.items() if len(f) == 1 and claimed[f[0][0]] == 1]

    nested = pairing(_name_words)
    if not any(_name_words(n)[-1:] == ("reverse",) for n in left_ref):
        return nested
    flat = pairing(lambda name: _flat_direction(_name_words(name)))
    return flat if len(flat) > len(nested) else nested


def _pairs_by_value(
    reference: dict[str, torch.Tensor], own: dict[str, torch.Tensor], taken: list[tuple[str, str, bool]]
) -> list[tuple[str, str, bool]]:
    """Reference and candidate tensors left unpaired that are equal already (shape, dtype and values), where each
    has exactly one such partner: copying changes nothing, but the two no longer count among the tensors of
    their shape (a Linear's bias, a GroupNorm's weight and bias, all of one shape: the norm's ones and zeros
    pair here, and the bias is then the one left of its shape)."""
    left_ref, left_own = _unpaired(reference, own, taken)
    matches = {
        r: [o for o, t in left_own.items() if _same_kind(t, v, v.shape) and torch.equal(t.cpu(), v.cpu())]
        for r, v in left_ref.items()
    }
    claimed = Counter(o for found in matches.values() for o in found)
    return [(r, found[0], False) for r, found in matches.items() if len(found) == 1 and claimed[found[0]] == 1]


def _transposed_shape(value: torch.Tensor) -> tuple[int, ...] | None:
    """The shape of a 2-D tensor stored transposed; None for other ranks and square ones (ambiguous)."""
    if value.dim() != 2 or value.shape[0] == value.shape[1]:
        return None
    return (value.shape[1], value.shape[0])


def _same_kind(target: torch.Tensor, value: torch.Tensor, shape: Any) -> bool:
    return tuple(target.shape) == tuple(shape) and target.dtype == value.dtype


def _prepare(spec: JobSpec, job_dir: Path) -> Any:
    """Before the candidate is imported: poisoned allocations, the interpreter's patches, CUDA emulation (when
    the job asks for it), then the integrity monitor (above the emulation: it sees what the candidate sees)."""
    _poison_uninitialized_memory()
    interpreter.install(overflow_check=spec.overflow_check, gpu_frontend=spec.gpu_frontend)
    if spec.cuda_emulation:
        cuda.CudaEmulation().install()
    if spec.integrity is None:
        return None
    from kope.evaluate.inside.monitor import Monitor

    monitor = Monitor(
        str(job_dir / protocol.CANDIDATE_FILE),
        frozenset(spec.integrity.extra_allow),
        guarded=(sys.modules[__name__],),
        copy_tolerance=spec.integrity.copy_tolerance,
    )
    monitor.install()
    return monitor


def _candidate(spec: JobSpec, job_dir: Path, sealed: Channel) -> WorkerResult:
    device = spec.device
    monitor = _prepare(spec, job_dir)
    diagnostics = _Diagnostics(spec, job_dir)
    model_new, failure = _load_candidate(spec, job_dir)
    if failure is not None:
        return _with_observations(failure, monitor, diagnostics)
    assert model_new is not None
    try:
        init_inputs = tensors.load(job_dir / protocol.INIT_FILE)
        torch.manual_seed(spec.init_seed)
        with monitor.construction() if monitor else contextlib.nullcontext():
            model = model_new(*init_inputs)
        if monitor is not None:
            monitor.model_built(model)
        loaded, pairs = _copy_reference_state(model, job_dir, spec.parameter_pairs)
        model = model.to(device)
        model.train(spec.module_mode == "train")
        same_state_each_call(model)
        if monitor is not None:
            monitor.model_ready(model, loaded)
    except Exception as exc:
        return _with_observations(_classified("load", exc, "constructing ModelNew failed"), monitor, diagnostics)
    result = WorkerResult(mode="candidate", loaded_parameters=loaded, parameter_pairs=pairs)
    probes = monitor is not None and spec.integrity is not None
    pristine: list[list[Any]] = []
    first_output: Any = None
    last_output: Any = None
    storage: list[Any] = []
    for index in range(spec.trials):
        try:
            inputs = _as_device(tensors.load_bytes(sealed.inputs(protocol.inputs_file(index))), device)
        except FeedRefused as exc:
            failure = _candidate_error("runtime", f"trial {index}: {exc}", False)
            failure.trials = result.trials
            return _with_observations(failure, monitor, diagnostics)
        if index == 1 and probes:
            inputs = _refilled(storage, inputs)
        before = copy.deepcopy(inputs)
        interpreter.select(index)
        try:
            began = time.perf_counter()
            with torch.no_grad(), monitor.forward(inputs) if monitor else contextlib.nullcontext():
                output = model(*inputs)
            _synchronize(device)
            seconds = time.perf_counter() - began
        except Exception as exc:
            failure = _classified("runtime", exc, f"forward failed on trial {index}")
            _own_sizes_only(failure, exc, spec)
            failure.trials = result.trials
            failure.autotune = interpreter.runs()
            return _with_observations(failure, monitor, diagnostics)
        try:  # packed first, from exact builtin containers: no code of the candidate runs between forward and here
            output = plain(output)
            meta = sealed.send_value(protocol.outputs_file(index), output)
        except UnsupportedValueError as exc:
            failure = _candidate_error("shape", f"forward returned a value kope cannot compare: {exc}", False)
            return _with_observations(failure, monitor, diagnostics)
        if monitor is not None:
            monitor.check_call(inputs, before, output)
        result.trials.append(TrialRecord(index=index, outputs=meta, seconds=seconds))
        pristine.append(before)
        if index == 0:
            first_output = _detached_copy(output)
            storage = inputs
        last_output = output
    interpreter.select(0)
    result.autotune = interpreter.runs()
    if probes and pristine:
        _ghost_replay(spec, model, monitor, pristine[0], first_output, last_output)
    if spec.timing and pristine:
        _time_candidate(spec, result, model, pristine)
    return _with_observations(result, monitor, diagnostics)


def _with_observations(result: WorkerResult, monitor: Any, diagnostics: _Diagnostics | None = None) -> WorkerResult:
    if cuda.active is not None:
        result.cuda_emulated = cuda.active.used()
    if monitor is not None:
        result.observations = monitor.finish()
    if diagnostics is not None:
        diagnostics.finish(result)
    return result


class _Diagnostics:
    """The bounds checker and the tracer, when a job asks for them (CPU interpreter only)."""

    def __init__(self, spec: JobSpec, job_dir: Path) -> None:
        self.checker: Any = None
        self.tracer: Any = None
        interpreted = os.environ.get("TRITON_INTERPRET") == "1"
        candidate_file = str(job_dir / protocol.CANDIDATE_FILE)
        if spec.bounds_check and interpreted:
            from kope.evaluate.inside.bounds import BoundsChecker

            self.checker = BoundsChecker(candidate_file)
            self.checker.install()
        if spec.trace is not None and interpreted:
            from kope.evaluate.inside.trace import Tracer

            self.tracer = Tracer(candidate_file, spec.trace)
            self.tracer.install()

    def finish(self, result: WorkerResult) -> None:
        if self.checker is not None:
            result.bounds = self.checker.report()
        if self.tracer is not None:
            self.tracer.uninstall()
            result.trace = self.tracer.hits
            result.trace_reached = self.tracer.reached_kernel


def _detached_copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list | tuple):
        return type(value)(_detached_copy(v) for v in value)
    return value


def _refilled(storage: list[Any], fresh: list[Any]) -> list[Any]:
    """The caching probe, on every case: the second trial runs in the first trial's input tensors, refilled in
    place with its own values. A candidate that caches by storage, identity or last call returns a stale output,
    which the parent finds by comparing trial 1 with the first trial's reference (the job cannot tell a probe
    from a trial: every trial 1 is one)."""
    refilled: list[Any] = []
    with torch.no_grad(), torch._C.DisableTorchFunctionSubclass():
        for index, values in enumerate(fresh):
            target = storage[index] if index < len(storage) else None
            if (
                isinstance(target, torch.Tensor)
                and isinstance(values, torch.Tensor)
                and (target.shape, target.dtype, target.device) == (values.shape, values.dtype, values.device)
            ):
                target.copy_(values)
                refilled.append(target)
            else:
                refilled.append(values)
    return refilled


def _ghost_replay(
    spec: JobSpec, model: torch.nn.Module, monitor: Any, inputs: list[Any], first_output: Any, last_output: Any
) -> None:
    """Run forward once more with every launch of the candidate's kernels turned into a no-op: if the
    output is still the first trial's, the kernels do no work. Outputs the candidate may reuse are
    poisoned first, so a buffer it returns again cannot pass for fresh work."""
    from kope.evaluate.inside.outputs import output_tensors, same_outputs

    assert spec.integrity is not None
    with torch._C.DisableTorchFunctionSubclass():
        informative = any(
            t.numel() > 0 and not (t.is_floating_point() and bool(t.isnan().all()))
            for t in output_tensors(first_output)
        )
    if not informative:
        return
    with torch.no_grad(), torch._C.DisableTorchFunctionSubclass():
        for tensor in output_tensors(last_output):
            tensor.fill_(float("nan") if tensor.is_floating_point() else -1)
    try:
        with torch.no_grad(), monitor.ghosted():
            ghost = plain(model(*copy.deepcopy(inputs)))
        _synchronize(spec.device)
        monitor.observations.ghost_unchanged = same_outputs(ghost, first_output)
    except Exception:
        monitor.observations.ghost_unchanged = False


def _time_candidate(spec: JobSpec, result: WorkerResult, model: torch.nn.Module, input_sets: list[list[Any]]) -> None:
    if spec.device.startswith("cuda"):
        result.timing_ms, result.timing_runs, result.timing_method = _time_forward(model, input_sets, spec)
        return
    durations = sorted(t.seconds for t in result.trials)
    result.timing_ms = durations[len(durations) // 2] * 1000
    result.timing_runs = len(durations)
    result.timing_method = "interpreter-wall" if os.environ.get("TRITON_INTERPRET") == "1" else "cpu-wall"


def _tail() -> str:
    lines = traceback.format_exc().rstrip().splitlines()
    return "\n".join(lines[-_TRACEBACK_LINES:])
