"""The `shapes` job, run inside the sandbox: what inputs a task makes under given overrides.

For each probe the task's source (overrides already applied) is executed as a fresh module, then
`get_inputs()` runs under PyTorch's meta device, which gives every tensor's shape and dtype without
allocating its data: a KernelBench input of billions of elements costs nothing to look at; where the
probe asks, the reference `Model` is built and run there too, for the output shapes. Other probes
build the inputs for real (seeded, small sizes) and, if they fit the element budget, run the
reference on them and say whether every floating-point output is finite.

The result file is rewritten after every probe, so a job cut short by its time limit still reports
the probes it finished. Also here: the input transform of reference jobs (`x * scale + shift`).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from kope import protocol
from kope.evaluate.inside import cuda
from kope.protocol import JobSpec, WorkerResult
from kope.protocol.probing import OutputSignal, ProbedInput, ShapeProbe, ShapeProbeResult

_TASK_MODULE = "kope_task"
_SEED = 0


STRUCTURAL_ZEROS = 0.01
"""The share of exact zeros above which a task's input has a structure a shift keeps (triangular, banded, padded)."""


def transform_inputs(inputs: list[Any], scale: float, shift: float, pattern: str | None = None) -> list[Any]:
    """Floating-point tensors (also inside lists and tuples) become `p * scale + shift`, where `p` is the
    tensor itself or, with a `pattern`, a structured tensor of its shape (see kope.protocol.inputs.InputTransform).

    A shift keeps the exact zeros of a tensor that has a structure of them (`STRUCTURAL_ZEROS` of its elements or
    more): `torch.triu(torch.rand(n, n))` stays upper triangular, so a kernel that honestly skips the zero
    triangle the task promises is judged on inputs the task could give. Random inputs have no exact zeros to keep."""
    if scale == 1.0 and shift == 0.0 and pattern is None:
        return inputs
    return [_transform(value, scale, shift, pattern) for value in inputs]


def _transform(value: Any, scale: float, shift: float, pattern: str | None) -> Any:
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            return value
        base = _structured(value, pattern) if pattern else value
        moved = base * scale + shift
        if shift and pattern in (None, "outliers") and not value.is_meta:
            zeros = value == 0
            if float(zeros.float().mean()) >= STRUCTURAL_ZEROS:
                moved = torch.where(zeros, torch.zeros_like(moved), moved)
        return moved
    if isinstance(value, list | tuple):
        items = [_transform(v, scale, shift, pattern) for v in value]
        return type(value)(items) if isinstance(value, tuple) else items
    return value


def _structured(like: torch.Tensor, pattern: str) -> torch.Tensor:
    if pattern == "symmetric":
        if like.dim() >= 2 and like.shape[-1] == like.shape[-2]:
            return (like + like.transpose(-1, -2)) / 2
        return like
    if pattern == "ones":
        return torch.ones_like(like)
    if pattern == "zeros":
        return torch.zeros_like(like)
    if pattern == "outliers":
        return _outliers(like)
    if pattern == "arange":
        count = max(like.numel(), 1)
        return (torch.arange(like.numel(), dtype=torch.float64) / count).reshape(like.shape).to(like.dtype)
    out = torch.zeros_like(like)
    if like.dim() == 0:
        return out + 1
    if pattern == "identity" and like.dim() >= 2:
        size = min(like.shape[-1], like.shape[-2])
        index = torch.arange(size)
        out[..., index, index] = 1
        return out
    out[..., 0] = 1
    return out


OUTLIER_STRIDE = 61
OUTLIER_FACTOR = 10.0


def _outliers(like: torch.Tensor) -> torch.Tensor:
    """The values, with every `OUTLIER_STRIDE`-th element (of the flattened tensor) times `OUTLIER_FACTOR`,
    alternately positive and negative: far outside the task's own range, in both directions."""
    flat = like.reshape(-1).clone()
    positions = torch.arange(0, flat.numel(), OUTLIER_STRIDE, device=flat.device)
    signs = torch.ones(positions.numel(), dtype=flat.dtype, device=flat.device)
    signs[1::2] = -1
    flat[positions] = flat[positions] * signs * OUTLIER_FACTOR
    return flat.reshape(like.shape)


def run(spec: JobSpec, job_dir: Path) -> WorkerResult:
    began = time.monotonic()
    result = WorkerResult(mode="shapes")
    for probe in spec.shape_probes:
        out_of_time = spec.deadline_s is not None and time.monotonic() - began > spec.deadline_s
        result.shape_probes.append(_probe(probe, spec, out_of_time))
        _write_partial(job_dir, result)
    return result


def _write_partial(job_dir: Path, result: WorkerResult) -> None:
    tmp = job_dir / (protocol.RESULT_FILE + ".tmp")
    tmp.write_text(result.model_dump_json())
    os.replace(tmp, job_dir / protocol.RESULT_FILE)


def _exec(source: str, path: str) -> types.ModuleType:
    module = types.ModuleType(_TASK_MODULE)
    module.__file__ = path
    sys.modules[_TASK_MODULE] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def _failure(stage: str, path: str) -> str:
    """One line: the stage, the exception and the task's line where it was raised."""
    exc = sys.exc_info()[1]
    frames = traceback.extract_tb(sys.exc_info()[2])
    line = next((f.lineno for f in reversed(frames) if f.filename == path), None)
    where = f" (task line {line})" if line else ""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{stage}: {type(exc).__name__}: {text}{where}"[:500]


def _probe(probe: ShapeProbe, spec: JobSpec, out_of_time: bool) -> ShapeProbeResult:
    path = spec.task_path or "<task>"
    began = time.perf_counter()
    report = ShapeProbeResult()
    try:
        module = _exec(probe.source, path)
    except Exception:
        report.error = _failure("executing the task file", path)
        return report
    try:
        torch.manual_seed(_SEED)
        if probe.meta:
            with torch.device("meta"), cuda.task_device(spec.cuda_emulation):  # inside: `cuda` becomes `meta`
                inputs = list(module.get_inputs())
        else:
            inputs = list(module.get_inputs())
    except Exception:
        report.error = _failure("get_inputs()", path)
        return report
    report.inputs = [_describe(value) for value in inputs]
    report.numel = sum(_numel(value) for value in inputs)
    if probe.meta and probe.outputs:
        _meta_outputs(module, inputs, path, report, spec.cuda_emulation)
    if not probe.reference:
        report.seconds = time.perf_counter() - began
        return report
    if probe.max_elements is not None and report.numel > probe.max_elements:
        report.skipped = f"the inputs hold {report.numel} elements, over the budget of {probe.max_elements}"
    elif out_of_time:
        report.skipped = "the derivation ran out of time before this variant"
    else:
        _run_reference(module, probe, spec, path, report)
    report.seconds = time.perf_counter() - began
    return report


def _meta_outputs(
    module: types.ModuleType, inputs: list[Any], path: str, report: ShapeProbeResult, gpu_task: bool
) -> None:
    try:
        with torch.device("meta"), cuda.task_device(gpu_task), torch.no_grad(), _recurrent_shapes():
            torch.manual_seed(_SEED)
            model = module.Model(*module.get_init_inputs())
            report.param_numel = _state_numel(model)
            outputs = model(*inputs)
    except Exception:
        report.output_error = _failure("the reference on the meta device", path)
        return
    report.outputs = [_describe(value) for value in _flatten(outputs)]
    report.output_numel = _numel(outputs)


_RECURRENT = ("lstm", "gru", "rnn_tanh", "rnn_relu")


@contextlib.contextmanager
def _recurrent_shapes() -> Iterator[None]:
    """`nn.LSTM`, `nn.GRU` and `nn.RNN` on the meta device, by their shapes alone.

    PyTorch has no meta kernel for the fused recurrent ops: the meta device runs them step by step,
    layer by layer, through its Python decompositions, which takes about 35 s for KernelBench's
    6-layer LSTM over 512 steps, and the shapes job ran out of time before probing any other size.
    The module's own `forward` still checks the input and hidden sizes (`check_forward_args`); only
    the fused op (`torch._VF.lstm`, ...) is replaced, on meta tensors, by the shapes it returns.
    """
    vf: Any = torch._VF
    own = {name: vars(vf)[name] for name in _RECURRENT if name in vars(vf)}
    for name in _RECURRENT:
        setattr(vf, name, _recurrent_meta(getattr(vf, name), lstm=name == "lstm"))
    try:
        yield
    finally:
        for name in _RECURRENT:
            delattr(vf, name)
        for name, value in own.items():
            setattr(vf, name, value)


def _recurrent_meta(real: Callable[..., Any], lstm: bool) -> Callable[..., Any]:
    def op(input: torch.Tensor, *args: Any) -> Any:
        if not input.is_meta:
            return real(input, *args)
        # (hx, weights, ..., bidirectional, batch_first), or (batch_sizes, hx, weights, ..., bidirectional)
        # for a packed sequence; an LSTM's hx is the tuple (h0, c0)
        packed = isinstance(args[0] if lstm else args[1], torch.Tensor)
        hx = args[1] if packed else args[0]
        bidirectional = bool(args[-1] if packed else args[-2])
        width = (hx[0] if lstm else hx).shape[-1] * (2 if bidirectional else 1)
        # (seq, batch) or (batch, seq) as the input has them; a packed sequence's data is (steps, features)
        shape = [*input.shape[:-1], width]
        output = input.new_empty(shape)
        states = tuple(h.new_empty(h.shape) for h in hx) if lstm else (hx.new_empty(hx.shape),)
        return (output, *states)

    return op


def _run_reference(
    module: types.ModuleType, probe: ShapeProbe, spec: JobSpec, path: str, report: ShapeProbeResult
) -> None:
    device = spec.device
    stage = "get_init_inputs()"
    try:
        torch.manual_seed(_SEED)
        init_inputs = list(module.get_init_inputs())
        stage = "building the model"
        torch.manual_seed(_SEED)
        model = module.Model(*init_inputs).to(device).train(spec.module_mode == "train")
        report.param_numel = _state_numel(model)
        stage = "get_inputs()"
        torch.manual_seed(_SEED + 1)
        inputs = transform_inputs(list(module.get_inputs()), probe.input_scale, probe.input_shift, probe.input_pattern)
        stage = "the reference"
        with torch.no_grad():
            outputs = model(*[_to_device(v, device) for v in inputs])
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    except Exception:
        report.error = _failure(stage, path)
        return
    report.ran = True
    report.finite = _finite(outputs)
    report.outputs = [_describe(value) for value in _flatten(outputs)]
    report.output_numel = _numel(outputs)
    report.signal = output_signal(inputs, outputs)


def output_signal(inputs: list[Any], outputs: Any) -> list[OutputSignal]:
    """How each finite floating-point output compares with the inputs: equal to one, constant, near zero."""
    floats = [v for v in _flatten(inputs) if isinstance(v, torch.Tensor) and v.is_floating_point()]
    signals: list[OutputSignal] = []
    for index, value in enumerate(_flatten(outputs)):
        if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.numel() == 0:
            continue
        y = value.detach().to("cpu", torch.float64)
        if not bool(torch.isfinite(y).all()):
            continue
        signal = OutputSignal(
            output=index,
            dtype=str(value.dtype).removeprefix("torch."),
            numel=int(y.numel()),
            max_abs=float(y.abs().max()),
            spread=float(y.max() - y.min()),
        )
        for position, x in enumerate(floats):
            if tuple(x.shape) != tuple(y.shape):
                continue
            error = float((y - x.detach().to("cpu", torch.float64)).abs().max())
            if signal.input_error is None or error < signal.input_error:
                signal.input_error, signal.input_index = error, position
        signals.append(signal)
    return signals


def _state_numel(model: Any) -> int | None:
    """Elements of a model's parameters and buffers (None when the reference is not an nn.Module)."""
    if not isinstance(model, torch.nn.Module):
        return None
    return sum(int(t.numel()) for t in (*model.parameters(), *model.buffers()))


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [item for v in value for item in _flatten(v)]
    if isinstance(value, dict):
        return [item for v in value.values() for item in _flatten(v)]
    return [value]


def _describe(value: Any) -> ProbedInput:
    if isinstance(value, torch.Tensor):
        return ProbedInput(type="tensor", shape=list(value.shape), dtype=str(value.dtype).removeprefix("torch."))
    return ProbedInput(type=type(value).__name__)


def _numel(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return int(value.numel())
    if isinstance(value, list | tuple):
        return sum(_numel(v) for v in value)
    if isinstance(value, dict):
        return sum(_numel(v) for v in value.values())
    return 0


def _finite(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.is_complex():
            return bool(torch.isfinite(value).all())
        return True
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def _to_device(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list | tuple):
        items = [_to_device(v, device) for v in value]
        return type(value)(items) if isinstance(value, tuple) else items
    return value
