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

import contextlib
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch

from kope.evaluate.inside import hooks, outputs, tracing, watch
from kope.evaluate.inside.outputs import is_constant, leaves, same_bits, storage_range
from kope.evaluate.inside.provenance import Label, span
from kope.evaluate.inside.tracing import Recorder, Tracer
from kope.protocol import Observations, OutputPart, TorchCall


class Monitor(Tracer):
    """Counts launches, records PyTorch calls and watches for tampering, in the candidate worker."""

    def __init__(
        self,
        candidate_file: str,
        extra_allow: frozenset[str] = frozenset(),
        guarded: Sequence[types.ModuleType] = (),
        copy_tolerance: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        super().__init__(candidate_file, extra_allow, copy_tolerance)
        self.guarded = tuple(guarded)
        """Modules of the caller whose functions are watched for replacement, like the monitor's own."""
        self._identities: dict[str, object] = {}
        self._watched: dict[str, Callable[[], object]] = {}

    def install(self) -> None:
        hooks.install(self)
        self._watched = watch.watched((*self.guarded, sys.modules[__name__], tracing, hooks, outputs, watch))
        self._identities = {name: get() for name, get in self._watched.items()}
        self.threads_before = threading.active_count()

    @contextlib.contextmanager
    def construction(self) -> Iterator[None]:
        """Wrap ModelNew's construction: PyTorch computation in __init__ is labelled as such."""
        self.phase, self.tracking = "init", True
        try:
            with Recorder(self):
                yield
        finally:
            self.phase, self.tracking = None, False

    @contextlib.contextmanager
    def forward(self, inputs: list[Any] | None = None) -> Iterator[None]:
        """Wrap one real forward call: counts its launches, records its PyTorch calls, follows provenance."""
        self.launches = 0
        self._stores = []
        self._fills = []
        self.shadow.clear()
        self.contents.clear()
        for start, end, label in self._persistent:
            self.shadow.write(start, end, label)
        for index, value in enumerate(inputs or []):
            if isinstance(value, torch.Tensor) and value.numel():
                self.shadow.write(*span(value), Label(inputs=frozenset({index})))
        if self.interpreted:
            self.note_writes((self._state, inputs or []))
        self._torch_elements = self._kernel_elements = 0
        recorder = Recorder(self)
        self.phase, self.tracking = "forward", True
        try:
            with recorder:
                yield
                stack = torch.overrides._get_current_function_mode_stack()
                if not stack or stack[-1] is not recorder:
                    self.record_lost("the PyTorch function-mode stack was changed during forward")
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
            changed = isinstance(now, torch.Tensor) and isinstance(then, torch.Tensor) and not same_bits(now, then)
            if changed and index not in self.observations.mutated_inputs:
                self.observations.mutated_inputs.append(index)
        input_ranges = [storage_range(t) for t in inputs if isinstance(t, torch.Tensor) and t.numel()]
        for path, leaf in leaves(output):
            if type(leaf) is not torch.Tensor:
                kind = f"{path}: {type(leaf).__module__}.{type(leaf).__qualname__}"
                if isinstance(leaf, torch.Tensor) and kind not in self.observations.output_types:
                    self.observations.output_types.append(kind)
                continue
            if not leaf.numel():
                continue
            start, end = storage_range(leaf)
            if (
                any(start < high and low < end for low, high in input_ranges)
                and path not in self.observations.aliased_outputs
            ):
                self.observations.aliased_outputs.append(path)
            if self.interpreted and (self.shadow.changed(leaf) or self.contents.changed(leaf)):
                self.record_lost(
                    f"{path} holds values other than those its kernel stored: written by something no hook sees"
                )
            foreign = self._judge_output(path, leaf)
            if self.interpreted and self.launches and foreign and path not in self.observations.unwritten_outputs:
                self.observations.unwritten_outputs.append(path)
        self.observations.threads_alive = max(
            self.observations.threads_alive, threading.active_count() - self.threads_before
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
                constant = is_constant(leaf, (low - start) // size, (high - start) // size, 1 if label.fill else 2)
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
            self.record_lost("deterministic mode (which poisons uninitialised memory) was turned off")
        fill = getattr(torch._C, "_get_deterministic_fill_uninitialized_memory", None)
        if fill is not None and not fill():
            self.record_lost("filling of uninitialised memory was turned off")
        return obs


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
