"""Evaluate a candidate kernel against a task: sandboxed runs, full-coverage comparison.

For each case the reference runs in its own sandboxed process (once, then cached) and the
candidate in another; the comparison happens here, in a process that never imports candidate
code. The first case runs alone: if the candidate does not even load (syntax, import, load), hangs
or exhausts its memory there, the other cases are not run and say why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import ValidationError

from kope import protocol
from kope.cases.task import Case, OverrideValue, Task, build_cases, load_task, parse_tolerances
from kope.cases.tolerance import PROFILES, Tolerance, other_profiles, resolve_profile
from kope.errors import (
    CandidateFileError,
    ReferenceError_,
    SandboxError,
    TaskFileError,
    TooLargeError,
)
from kope.evaluate import compare, judging, preconditions
from kope.evaluate.assembly import (
    assemble,
    case_timing,
    judges_copies,
    low_signal_report,
    select_cases,
    skipped_case,
)
from kope.evaluate.cache import ReferenceCache, reference_key
from kope.evaluate.failures import classify, name_candidate, stdout_excerpt, task_failure, too_large_hint
from kope.evaluate.options import EvalOptions, Which
from kope.evaluate.runner import ForkServer, Runner, SpawnRunner
from kope.evaluate.sandbox import WORK_DIR, Outcome, SandboxLimits
from kope.integrity import gate
from kope.protocol import IntegritySpec, JobSpec, PlanInfo, WorkerResult
from kope.protocol.channel import FEED_DIR, SEALED_DIR
from kope.protocol.results import (
    CaseResult,
    EvalError,
    EvalResult,
    Finding,
    Integrity,
    OutputDiff,
    ToleranceProfile,
)

if TYPE_CHECKING:
    from kope.cases.derivation import Derivation
    from kope.protocol.probing import ShapeProbe, ShapeProbeResult

_SMALLEST_BUDGET = 1000
"""The smallest element budget the interpreter's retries derive cases at."""
_PROBE_ELEMENTS = 256
"""The fewest elements (inputs and outputs) of a case the cost probe times: fewer say more of the job's
fixed costs than of the kernel's."""
_FORWARD_OVERHEAD_S = 0.5
"""What a forward costs on the CPU whatever its size (the monitor's per-call work, Python, small launches): only
the cost probe's time beyond it is taken to grow with the elements."""
_PROBE_SHARE = 0.4
"""The share of the time limit the first case's trials may fill, as the cost probe predicts them."""


@dataclass(frozen=True)
class _Probe:
    case: Case
    elements: int
    first_elements: int


def _mostly_fixed_cost(probed: CaseResult) -> bool:
    """Whether the cost probe's forward ran and took at most twice what any forward costs: its time then says nothing
    of how the kernel's grows, and the machine's load moves it as much as the kernel's work does (its excess over the
    fixed cost, multiplied by the ratio of the elements, predicted minutes on a loaded machine for a first case that
    takes a second): the first case is measured instead (`Evaluator._measured`)."""
    return probed.error is None and probed.forward_s is not None and probed.forward_s <= 2 * _FORWARD_OVERHEAD_S


def _allowed(options: EvalOptions, share: float | None) -> float:
    """The seconds the first case's trials may take in a session: a share of the time limit, at most `share`."""
    return min(options.timeout_s * _PROBE_SHARE, share if share is not None else float("inf"))


def _budget(options: EvalOptions) -> int:
    from kope.cases.sizes import default_max_elements

    return options.max_elements or default_max_elements(options.device)


COVERAGE_FACTORS = (2, 8)
"""The element budgets, as multiples of the derived cases', at which a larger case is tried for a kernel the host
launches only on a branch no derived case took (`Evaluator._covering`): the cheap one first, then the largest (a
branch on a size is taken past a threshold: what 8 x does not reach, 4 x does not either)."""

_STOP_KINDS = frozenset({"syntax", "import", "load", "timeout", "memory", "disk", "interpreter", "unsupported"})


@dataclass(frozen=True)
class _Reference:
    entry: Path
    result: WorkerResult


@dataclass(frozen=True)
class _Run:
    """What every case of one evaluation shares."""

    task: Task
    source: str
    candidate_name: str
    options: EvalOptions
    tolerances: Mapping[str, Tolerance]
    allow_torch: tuple[str, ...]
    plan: PlanInfo
    artifacts: Path | None = None
    profile: ToleranceProfile = "strict"
    alternatives: Mapping[ToleranceProfile, Mapping[str, Tolerance]] = field(default_factory=dict)
    """The other profiles' tolerances: each case is judged under them too, from the same outputs."""
    pairs: tuple[tuple[str, str, bool], ...] = ()
    """How the first case paired the reference's tensors with the candidate's (`JobSpec.parameter_pairs`)."""


class Evaluator:
    """Evaluates candidates; keeps a fork server and a reference cache between evaluations.

    Use as a context manager (or call `close()`) so the fork server and scratch files go away.
    """

    def __init__(
        self,
        *,
        runner: Literal["fork", "spawn"] | Runner = "fork",
        cache_dir: Path | None = None,
        max_parallel: int = 2,
        scratch_dir: Path | None = None,
    ) -> None:
        self._owned_scratch = scratch_dir is None
        self.scratch = Path(tempfile.mkdtemp(prefix="kope-")) if scratch_dir is None else scratch_dir
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._runner_spec = runner
        self._runner: Runner | None = None if isinstance(runner, str) else runner
        self._runner_lock = threading.Lock()
        self.cache = ReferenceCache(cache_dir if cache_dir is not None else self.scratch / "reference")
        self.max_parallel = max(1, max_parallel)
        self._plans: dict[str, PlanInfo] = {}
        self._plan_lock = threading.Lock()
        self._derivations: dict[tuple[object, ...], Derivation] = {}
        self._hidden = tuple(os.path.realpath(p) for p in (self.scratch, self.cache.root, Path.home(), Path.cwd()))

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def runner(self) -> Runner:
        with self._runner_lock:
            if self._runner is None:
                self._runner = ForkServer().start() if self._runner_spec == "fork" else SpawnRunner()
            return self._runner

    def close(self) -> None:
        with self._runner_lock:
            if self._runner is not None and isinstance(self._runner_spec, str):
                self._runner.close()
            self._runner = None
        if self._owned_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tasks and cases -------------------------------------------------------------------

    def plan(self, task: Task, options: EvalOptions | None = None) -> PlanInfo:
        """Run the task file once (sandboxed) for its cases, size parameters and tolerances."""
        options = options or EvalOptions()
        with self._plan_lock:
            cached = self._plans.get(task.sha256)
        if cached is not None:
            return cached
        spec = JobSpec(mode="plan", device="cpu", task_source=task.source, task_path=str(task.path))
        with self._job(spec, self._limits(options)) as (result, outcome, _):
            pass
        if result is None or result.plan is None or result.error is not None:
            raise TaskFileError(task_failure(task, "running the task file", result, outcome))
        with self._plan_lock:
            self._plans[task.sha256] = result.plan
        return result.plan

    def cases(
        self,
        task: Task,
        *,
        set_overrides: Mapping[str, OverrideValue] | None = None,
        declared: Sequence[object] | None = None,
        options: EvalOptions | None = None,
    ) -> list[Case]:
        """The cases to evaluate: `declared` (from a cases file), the task's own, or derived; `--set` on top."""
        if declared is not None:
            return build_cases(task, declared, set_overrides=set_overrides, source="cases file")
        if not task.defines_get_cases:
            derivation = self.derivation(task, options)
            if derivation.too_large is not None and not set_overrides:
                raise TooLargeError(derivation.too_large.message, too_large_hint(derivation.too_large.fixes))
            from kope.cases.signal import mark_low_signal

            derived = derivation.case_dicts(named=not set_overrides)
            built = build_cases(task, derived, set_overrides=set_overrides, source="derived cases")
            return mark_low_signal(built, derivation)
        plan = self.plan(task, options)
        return build_cases(task, plan.cases, set_overrides=set_overrides)

    def derivation(self, task: Task, options: EvalOptions | None = None) -> Derivation:
        """Cases derived from the task's single shape (see `kope.cases.derive`); cached per task, device and budget."""
        from kope.cases.derive import derive
        from kope.cases.sizes import default_max_elements

        options = options or EvalOptions()
        budget = options.max_elements or default_max_elements(options.device)
        tolerances = self.tolerances(task, options)
        key = (task.sha256, options.device, budget, options.memory_mb, tuple(sorted(tolerances.items())))
        with self._plan_lock:
            cached = self._derivations.get(key)
        if cached is not None:
            return cached
        sizes = self.plan(task, options).sizes
        derivation = derive(
            task,
            sizes,
            lambda probes: self._shape_probes(task, probes, options),
            device=options.device,
            max_elements=budget,
            memory_mb=options.memory_mb,
            tolerances=tolerances,
        )
        with self._plan_lock:
            self._derivations[key] = derivation
        return derivation

    def _shape_probes(self, task: Task, probes: Sequence[ShapeProbe], options: EvalOptions) -> list[ShapeProbeResult]:
        """One sandboxed `shapes` job; probes it did not finish report why."""
        from kope.protocol.probing import ShapeProbeResult

        reference = any(p.reference for p in probes)
        spec = JobSpec(
            mode="shapes",
            device=options.device if reference else "cpu",
            task_path=str(task.path),
            shape_probes=list(probes),
            deadline_s=options.timeout_s if reference else None,
            module_mode=options.module_mode,
            cuda_emulation=options.emulates_cuda and _asks_for_cuda(task),
        )
        limits = dataclasses.replace(self._limits(options), timeout_s=options.timeout_s * (2 if reference else 1))
        with self._job(spec, limits) as (result, outcome, _):
            done = list(result.shape_probes) if result is not None else []
        if len(done) < len(probes):
            why = task_failure(task, "the shapes job", result, outcome)
            done += [ShapeProbeResult(error=why) for _ in probes[len(done) :]]
        return done[: len(probes)]

    def _limits(self, options: EvalOptions) -> SandboxLimits:
        """The job limits of `options`, with kope's own scratch, cache, home and working directory hidden."""
        return options.limits(hidden=self._hidden)

    def tolerances(
        self, task: Task, options: EvalOptions | None = None, profile: ToleranceProfile | None = None
    ) -> dict[str, Tolerance]:
        """Per-dtype tolerances: the profile's (None: the one `options` chooses), the task's TOLERANCES on top."""
        chosen = profile or resolve_profile((options or EvalOptions()).tolerance, task)[0]
        own = parse_tolerances(self.plan(task, options).tolerances) if "TOLERANCES" in task.assigned_names else {}
        return {**PROFILES[chosen], **own}

    # -- evaluation ------------------------------------------------------------------------

    def evaluate(
        self,
        task: Task | str | Path,
        candidate: str | Path,
        *,
        options: EvalOptions | None = None,
        cases: Sequence[Case] | None = None,
        which: Which = "all",
        on_case: Callable[[CaseResult], None] | None = None,
        artifacts: Path | None = None,
    ) -> EvalResult:
        """Evaluate `candidate` on the task's cases (`which`: all, visible, or a list of names).

        `artifacts`: a directory that receives, per case, the candidate's output files and the path
        of the reference run they were compared with (see `case_artifacts`), for diagnosis.
        """
        began = time.monotonic()
        options = options or EvalOptions()
        task = task if isinstance(task, Task) else load_task(task)
        candidate_path = Path(candidate).resolve()
        source = _read_candidate(candidate_path)
        profile, reason = resolve_profile(options.tolerance, task)
        try:
            all_cases = list(cases) if cases is not None else self.cases(task, options=options)
        except TooLargeError as exc:
            return EvalResult(
                status="error",
                error=EvalError(kind="too-large", message=str(exc), hint=exc.hint),
                cases=[],
                cases_run="all",
                task=str(task.path),
                candidate=str(candidate_path),
                device=options.device,
                seed=options.seed,
                seconds=round(time.monotonic() - began, 3),
                tolerance_profile=profile,
                tolerance_reason=reason,
                module_mode=options.module_mode,
            )
        selected, cases_run = select_cases(all_cases, which)
        plan = self.plan(task, options)
        run = _Run(
            task=task,
            source=source,
            candidate_name=str(candidate_path),
            options=options,
            tolerances=self.tolerances(task, options, profile),
            allow_torch=tuple(plan.allow_torch),
            plan=plan,
            artifacts=artifacts,
            profile=profile,
            alternatives={other: self.tolerances(task, options, other) for other in other_profiles(profile)},
        )

        def evaluate_case(case: Case, first: bool = False) -> CaseResult:
            result = self._evaluate_case(run, case, first=first)
            if on_case is not None:
                on_case(result)
            return result

        def again(smaller: EvalOptions, note: str) -> EvalResult:
            result = self.evaluate(task, candidate, options=smaller, which=which, on_case=on_case, artifacts=artifacts)
            notes = "; then ".join(n for n in (note, result.smaller_cases) if n)
            update = {"smaller_cases": notes, "seconds": round(time.monotonic() - began, 3)}
            return result.model_copy(update=update)

        probe = self._probe(task, options, cases, selected)
        probed: CaseResult | None = None
        if probe is not None:
            probed = evaluate_case(probe.case)
            fitted = self._fitted(task, options, probe, probed)
            if fitted is not None:
                return again(*fitted)
        results = [evaluate_case(selected[0], first=True)]
        run = dataclasses.replace(run, pairs=tuple(results[0].parameter_pairs))  # the other cases' sizes may not tell
        smaller = self._smaller(task, options, cases, results[0])
        if smaller is not None:
            return again(
                smaller,
                f"the first case outlived its {options.timeout_s:g} s limit in the interpreter: cases derived "
                f"again at {smaller.max_elements} elements",
            )
        stop = results[0].error is not None and results[0].error.kind in _STOP_KINDS and results[0].outside is None
        rest = [case for case in selected[1:] if probe is None or case is not probe.case]
        if stop:
            assert results[0].error is not None
            results += [skipped_case(case, results[0]) for case in rest]
        elif rest:
            with ThreadPoolExecutor(max_workers=self.max_parallel, thread_name_prefix="kope-case") as pool:
                results += list(pool.map(evaluate_case, rest))
        if probe is not None and probed is not None:
            results.insert(selected.index(probe.case), probed)
        slow = next((r for r in results[1:] if r.error is not None and r.error.kind == "timeout"), None)
        smaller = None if stop or slow is None else self._smaller(task, options, cases, slow)
        if slow is not None and smaller is not None:
            return again(
                smaller,
                f"case {slow.name} outlived its {options.timeout_s:g} s limit in the interpreter: cases derived "
                f"again at {smaller.max_elements} elements",
            )
        unchecked = judging.unlaunched(source, results)
        if unchecked and options.coverage and which == "all" and not stop and self._derived(task, options, cases):
            # a branch of the host no derived case took (a kernel for large sizes): a larger case that takes it
            covering = (
                self._covering(task, options, [name for name, _ in unchecked], evaluate_case)
                if judging.sized_branch(source)
                else None
            )
            if covering is not None:
                results.append(covering)
                unchecked = judging.unlaunched(source, results)
        integrity = Integrity()
        first = self._reference(task, selected[0], options).result
        if options.integrity:
            context = gate.static_context(task, plan.sizes, selected[0], first.inputs, run.allow_torch)
            policy = gate.run_context(first, plan, options.policy)
            integrity = gate.assess(source, context, results, provenance=True, policy=policy)
        result = assemble(task, candidate_path, options, results, cases_run, integrity, time.monotonic() - began)
        return result.model_copy(
            update={
                "tolerance_profile": profile,
                "tolerance_reason": reason,
                "module_mode": options.module_mode,
                "profile_disagreement": judging.disagreement(results),
                "limits": judging.limits(result, source, compare.tensor_dtypes(first.inputs), first.reference_random),
                "low_signal": low_signal_report(selected, all_cases),
                "unlaunched": [f"{name} (line {line})" for name, line in unchecked],
            }
        )

    def larger_case(
        self, task: Task, options: EvalOptions, budget: int, name: str, *, shrunk: bool = False
    ) -> Case | None:
        """The task's visible case shrunk to `budget` elements, when that is larger than every derived case; None
        when it is not, or the sizes cannot be derived again (`shrunk`: also when the task's own sizes fit the budget
        whole)."""
        try:
            derivation = self.derivation(task, options)
            larger = self.derivation(task, dataclasses.replace(options, max_elements=budget))
            base = next((c for c in larger.kept if c.visible and c.kind in ("original", "shrunk")), None)
            if (
                base is None
                or (shrunk and base.kind == "original")
                or (base.numel or 0) <= (max((c.numel or 0) for c in derivation.kept) if derivation.kept else 0)
            ):
                return None
            built = build_cases(task, [{**base.case_dict(named=False), "name": name}], source="own sizes")
        except Exception:  # a task whose sizes cannot be derived again: no extra case
            return None
        return dataclasses.replace(built[0], visible=False) if built else None

    def _derived(self, task: Task, options: EvalOptions, cases: Sequence[Case] | None) -> bool:
        """Whether the cases evaluated are kope's derived ones (the caller's own, a `--set` on them or a cases file
        are taken as given)."""
        if task.defines_get_cases:
            return False
        if cases is None:
            return True
        try:
            derived = {c.key() for c in self.cases(task, options=options)}
        except Exception:  # a task whose cases cannot be derived: the caller's are what there is
            return False
        return all(c.key() in derived for c in cases)

    def _covering(
        self, task: Task, options: EvalOptions, missing: Sequence[str], evaluate_case: Callable[[Case], CaseResult]
    ) -> CaseResult | None:
        """A larger case on which the host launches a kernel no derived case did (the task's visible case shrunk to 2,
        then 8 x the derived cases' budget, the first that launches one of `missing`); None where neither does, or
        one runs out of its time."""
        budget = _budget(options)
        for factor in COVERAGE_FACTORS:
            case = self.larger_case(task, options, factor * budget, f"coverage x{factor}")
            if case is None:
                continue
            result = evaluate_case(case)
            if set(result.launched) & set(missing):
                return result
            if result.error is not None and result.error.kind == "timeout":
                return None
        return None

    def _shrinkable(self, task: Task, options: EvalOptions, cases: Sequence[Case] | None) -> bool:
        """Whether the cases are kope's own derived cases on the CPU interpreter, with retries left: cases
        kope may derive again at a smaller element budget."""
        if task.defines_get_cases or options.device.startswith("cuda") or options.interpreter_retries <= 0:
            return False
        # the caller's own cases (a cases file, --set) are not ours to shrink
        return cases is None or [c.key() for c in cases] == [c.key() for c in self.cases(task, options=options)]

    def _smaller(
        self, task: Task, options: EvalOptions, cases: Sequence[Case] | None, case: CaseResult
    ) -> EvalOptions | None:
        """The options of a retry at a quarter of the element budget, when a case of derived cases timed out in
        the CPU interpreter and retries are left; else None."""
        timed_out = case.error is not None and case.error.kind == "timeout"
        if not timed_out or not self._shrinkable(task, options, cases):
            return None
        budget = _budget(options) // 4
        if budget < _SMALLEST_BUDGET:
            return None
        smaller = dataclasses.replace(options, max_elements=budget, interpreter_retries=options.interpreter_retries - 1)
        return smaller if self._derivable(task, smaller) else None

    def _derivable(self, task: Task, options: EvalOptions) -> bool:
        """Whether some case of the task fits `options`' element budget (a retry at a budget no case fits would
        end in `too-large` instead of judging the kernel)."""
        return self.derivation(task, options).too_large is None

    def _probe(
        self, task: Task, options: EvalOptions, cases: Sequence[Case] | None, selected: Sequence[Case]
    ) -> _Probe | None:
        """The cost probe, on the CPU interpreter with derived cases: the smallest of the other cases (at least
        `_PROBE_ELEMENTS` elements, an eighth of the first case's at most) runs first, so that its seconds per
        forward tell whether the first case can finish within the time limit before it is tried."""
        if len(selected) < 2 or not self._shrinkable(task, options, cases):
            return None
        elements = {c.name: (c.numel or 0) + (c.output_numel or 0) for c in self.derivation(task, options).kept}
        first = elements.get(selected[0].name, 0)
        sized = [(elements.get(c.name, 0), i, c) for i, c in enumerate(selected[1:])]
        usable = [s for s in sized if s[0] >= _PROBE_ELEMENTS and s[0] * 8 <= first]
        if not usable:
            return None
        size, _, case = min(usable)
        return _Probe(case=case, elements=size, first_elements=first)

    def _scaled_probe(self, task: Task, options: EvalOptions) -> _Probe | None:
        """Where every derived case is about as large as the first (sizes the reference ties together), the probe
        is the first case of a derivation at an eighth of the first case's elements."""
        first = self._first_elements(task, options)
        budget = max(first // 8, _SMALLEST_BUDGET)
        smaller = dataclasses.replace(options, max_elements=budget)
        if first // 8 < _PROBE_ELEMENTS or budget >= _budget(options) or not self._derivable(task, smaller):
            return None
        elements = self._first_elements(task, smaller)
        case = self.cases(task, options=smaller)[0]
        return _Probe(case=case, elements=elements, first_elements=first) if elements else None

    def _first_elements(self, task: Task, options: EvalOptions) -> int:
        """The elements (inputs and outputs) of the first derived case at `options`' budget; 0 when none is kept."""
        first = self.cases(task, options=options)[0].name if self.derivation(task, options).kept else None
        sized = {c.name: (c.numel or 0) + (c.output_numel or 0) for c in self.derivation(task, options).kept}
        return sized.get(first, 0) if first is not None else 0

    def fit(
        self, task: Task | str | Path, candidate: str | Path, options: EvalOptions, *, seconds: float | None = None
    ) -> tuple[EvalOptions, str | None]:
        """The options a session of many evaluations of `candidate` should use (a repair search): the cost probe
        run alone on its case, and the element budget at which the first derived case's trials are predicted to
        take at most `seconds` (default: a share of the time limit) in the CPU interpreter, with the note saying
        why; `options` and None where the cases are not kope's to shrink, no case can probe, or the first fits."""
        task = task if isinstance(task, Task) else load_task(task)
        if not self._shrinkable(task, options, None):
            return options, None
        probe = self._probe(task, options, None, self.cases(task, options=options)) or self._scaled_probe(task, options)
        if probe is None:
            return options, None
        alone = dataclasses.replace(options, interpreter_retries=0)
        probed = self.evaluate(task, candidate, options=alone, cases=[probe.case])
        if not probed.cases:
            return options, None
        case = probed.cases[0]
        if _mostly_fixed_cost(case):
            fitted = self._measured(task, candidate, options, probe, case, share=seconds)
        else:
            fitted = self._fitted(task, options, probe, case, share=seconds)
        return fitted if fitted is not None else (options, None)

    def _measured(
        self,
        task: Task,
        candidate: str | Path,
        options: EvalOptions,
        probe: _Probe,
        probed: CaseResult,
        *,
        share: float | None,
    ) -> tuple[EvalOptions, str] | None:
        """Where the probe's time is mostly the fixed cost of a forward (it says little of how the kernel's time
        grows: a convolution's work grows as the product of its channels, not as the elements), the first case is
        run once, limited to twice its share: when it does not finish there, the budget is cut as the two times
        grow (a power of the elements, at least linear), and the cases derived again; None when it fits."""
        if probed.forward_s is None or probe.first_elements <= probe.elements:
            return None
        allowed = _allowed(options, share)
        limit = min(options.timeout_s, max(2 * allowed, 2 * _FORWARD_OVERHEAD_S))
        once = dataclasses.replace(options, interpreter_retries=0, trials=1, integrity=False, timeout_s=limit)
        first = self.cases(task, options=options)[0]
        result = self.evaluate(task, candidate, options=once, cases=[first])
        case = result.cases[0] if result.cases else None
        if case is None or (case.error is not None and case.error.kind != "timeout"):
            return None
        took = limit if case.error is not None or case.forward_s is None else case.forward_s
        forwards = options.trials + (1 if options.integrity else 0)
        if took * forwards <= 2 * allowed:
            return None
        growth = max(
            1.0, math.log(took / max(probed.forward_s, 1e-3)) / math.log(probe.first_elements / probe.elements)
        )
        budget = max(int(_budget(options) * (allowed / (took * forwards)) ** (1 / growth)), _SMALLEST_BUDGET)
        smaller = self._smallest_derivable(task, options, budget)
        if smaller is None:
            return None
        seen = f"outlived {limit:.0f} s" if case.error is not None else f"took {took:.1f} s per forward"
        note = (
            f"in the interpreter the kernel {seen} on the first case ({probe.first_elements} elements; "
            f"{probed.forward_s:.2f} s per forward on case {probe.case.name}, {probe.elements}): more than "
            f"the {allowed:.0f} s it may take, so cases derived again at {smaller.max_elements} elements"
        )
        return smaller, note

    def _smallest_derivable(self, task: Task, options: EvalOptions, budget: int) -> EvalOptions | None:
        """`options` at the smallest element budget from `budget` up (doubling, to half the current one) that some
        case of the task fits, one interpreter retry spent; None when none does. `budget` is first rounded to the
        nearest power of two (in ratio): a budget predicted from a timing moves with the machine's load, and the cases
        derived at it (their sizes, so what a repair search sees) would move with it; rounded, they change only where
        the load moves the prediction across the geometric middle of two powers."""
        budget = max(1 << round(math.log2(max(budget, 1))), _SMALLEST_BUDGET)
        while budget <= _budget(options) // 2:
            smaller = dataclasses.replace(
                options, max_elements=budget, interpreter_retries=options.interpreter_retries - 1
            )
            if self._derivable(task, smaller):
                return smaller
            budget *= 2
        return None

    def _fitted(
        self, task: Task, options: EvalOptions, probe: _Probe, probed: CaseResult, *, share: float | None = None
    ) -> tuple[EvalOptions, str] | None:
        """Options at an element budget whose first case the probe predicts to finish within `share` seconds
        (default: a share of the time limit; beyond a fixed cost per forward, the interpreter's time grows about as
        the elements do), and the note saying why; None when the first case fits as it is."""
        ratio = probe.first_elements / probe.elements
        if probed.error is not None and probed.error.kind == "timeout":
            predicted = options.timeout_s * ratio  # at least: its trials outlived the limit on the probe alone
            seen = f"outlived the {options.timeout_s:g} s limit"
        elif probed.forward_s is not None:
            forwards = options.trials + (1 if options.integrity else 0)  # the ghost replay runs forward once more
            predicted = max(probed.forward_s - _FORWARD_OVERHEAD_S, 0.0) * ratio * forwards
            seen = f"took {probed.forward_s:.1f} s per forward"
        else:
            return None
        share = _allowed(options, share)
        if predicted <= share:
            return None
        if _budget(options) // 2 < _SMALLEST_BUDGET:
            return None
        budget = max(min(int(_budget(options) * share / predicted), _budget(options) // 2), _SMALLEST_BUDGET)
        smaller = self._smallest_derivable(task, options, budget)
        if smaller is None:
            return None
        note = (
            f"in the interpreter the kernel {seen} on case {probe.case.name} ({probe.elements} elements), "
            f"so the first case ({probe.first_elements}) would need about {predicted:.0f} s, more than "
            f"the {share:.0f} s it may take: cases derived again at {smaller.max_elements} elements"
        )
        return smaller, note

    def _evaluate_case(self, run: _Run, case: Case, *, first: bool) -> CaseResult:
        """Run the candidate on one case and compare. Every case's job is alike (the same probes: the ghost
        replay, the caching probe); `first` only tells the verdict which case has the task's own inputs."""
        options, candidate_name = run.options, run.candidate_name
        reference = self._reference(run.task, case, options)
        files = {
            protocol.INIT_FILE: reference.entry / protocol.INIT_FILE,
            protocol.STATE_FILE: reference.entry / protocol.STATE_FILE,
        }
        for index in range(options.trials):  # handed to the worker one trial at a time, never readable all at once
            files[f"{FEED_DIR}/{protocol.inputs_file(index)}"] = reference.entry / protocol.inputs_file(index)
        spec = JobSpec(
            mode="candidate",
            device=options.device,
            candidate_path=candidate_name,
            init_seed=_seed(options.seed, case, "init"),
            trials=options.trials,
            timing=options.timing,
            timing_budget_ms=options.timing_budget_ms,
            integrity=IntegritySpec(
                extra_allow=list(run.allow_torch),
                copy_tolerance={dtype: (t.atol, t.rtol) for dtype, t in run.tolerances.items()},
            )
            if options.integrity
            else None,
            bounds_check=options.bounds_check,
            trace=options.trace,
            cuda_emulation=options.emulates_cuda,
            overflow_check=options.overflow_check,
            gpu_frontend=options.gpu_frontend,
            module_mode=options.module_mode,
            other_sizes=any(  # a size the case sets to other than the task's own literal (or a size not one)
                name not in run.task.literal_sizes or _as_tuple(run.task.literal_sizes[name]) != _as_tuple(value)
                for name, value in case.overrides.items()
            ),
            parameter_pairs=list(run.pairs),
            size_globals={
                name: (run.task.literal_sizes[name], value)
                for name, value in case.overrides.items()
                if name in run.task.literal_sizes
            },
        )
        with self._job(spec, self._limits(options), files=files, source=run.source, sealed=True) as (
            result,
            outcome,
            job_dir,
        ):
            sealed = job_dir / SEALED_DIR
            failed = CaseResult(
                name=case.name,
                overrides=dict(case.overrides),
                inputs=case.inputs,
                visible=case.visible,
                passed=False,
                stdout=stdout_excerpt(outcome),
                bounds=result.bounds if result is not None else [],
                sandbox=outcome.sandbox,
                trace=result.trace if result is not None and options.trace is not None else None,
                autotune=result.autotune if result is not None else [],
                emulated=result.cuda_emulated if result is not None else None,
                parameter_pairs=result.parameter_pairs if result is not None else [],
                launched=sorted(result.observations.kernels) if result is not None and result.observations else [],
            )
            findings = gate.observed(
                result.observations if result is not None else None,
                gate.run_context(reference.result, run.plan, options.policy, first_case=judges_copies(case, first)),
            )
            if outcome.channel_error is not None:
                findings.append(gate.sealed_channel_finding(case.name, outcome.channel_error))
            failed = failed.model_copy(update={"findings": findings})
            if run.artifacts is not None:
                _keep_artifacts(run.artifacts, case, sealed, reference.entry)
            error = classify(result, outcome, options, expected_trials=options.trials)
            if error is not None:
                refused = preconditions.refusal(error, run.source) if self._refusable(run, spec, first) else None
                error = name_candidate(error, job_dir, candidate_name, run.source)
                if refused is not None:
                    update = {"error": preconditions.not_judged(error, refused), "outside": refused}
                    return failed.model_copy(update=update)
                return failed.model_copy(update={"error": error})
            assert result is not None
            try:
                diffs = [
                    self._compare_trial(reference, sealed, index, protocol.outputs_file(index), run)
                    for index in range(options.trials)
                ]
            except compare.StructureMismatch as exc:
                return failed.model_copy(update={"error": EvalError(kind="shape", message=str(exc))})
            except ValueError as exc:
                message = f"the candidate's results are malformed: {exc}"
                return failed.model_copy(update={"error": EvalError(kind="exit", message=message)})
            timing = case_timing(reference.result, result)
            trials = len(diffs)
            if options.integrity:
                findings = findings + self._caching_probe(reference, sealed, diffs, case, run)
                findings += gate.implausible_speedup(
                    case.name,
                    timing,
                    bytes_moved=reference.result.input_bytes + reference.result.output_bytes,
                    device_name=reference.result.device_name,
                    bound=options.speedup_bound,
                )
            summary = compare.summarize(diffs)
            passed_under = {run.profile: bool(summary["passed"])}
            for other in run.alternatives:
                passed_under[other] = not any(d.mismatches_under.get(other, d.mismatch_count) for t in diffs for d in t)
            trial_passed = [not any(d.mismatch_count for d in trial) for trial in diffs]
            summary["notes"] = summary["notes"] + judging.config_notes(result.autotune, trial_passed)
            return failed.model_copy(
                update={
                    **summary,
                    "trials": trials,
                    "timing": timing,
                    "reference_precision": reference.result.precision,
                    "findings": findings,
                    "passed_under": passed_under,
                    "forward_s": max((t.seconds for t in result.trials), default=None),
                }
            )

    @staticmethod
    def _refusable(run: _Run, spec: JobSpec, first: bool) -> bool:
        """Whether the candidate's own precondition may refuse `spec`'s case (`kope.evaluate.preconditions`): a derived
        case of other sizes than the task's own, not the first (the task's own sizes or their shrunk stand-in, which it
        must accept), of a task that does not list its cases (a task's `get_cases()` are requirements)."""
        return spec.other_sizes and not first and not run.task.defines_get_cases

    def _caching_probe(
        self, reference: _Reference, sealed: Path, diffs: list[list[OutputDiff]], case: Case, run: _Run
    ) -> list[Finding]:
        """Trial 1 ran in trial 0's input storage refilled with its own values (the worker does so on every
        case). When it fails where trial 0 passed, and what it returned is trial 0's reference, it returned a
        stale result: caching. Otherwise its failure is the case's numeric failure and nothing more."""
        if len(diffs) < 2 or any(d.mismatch_count for d in diffs[0]) or not any(d.mismatch_count for d in diffs[1]):
            return []
        try:
            stale = self._compare_trial(reference, sealed, 0, protocol.outputs_file(1), run)
        except (compare.StructureMismatch, ValueError):
            return []
        return [] if any(d.mismatch_count for d in stale) else [gate.cache_probe_finding(case.name)]

    def _compare_trial(
        self, reference: _Reference, job_dir: Path, index: int, filename: str, run: _Run
    ) -> list[OutputDiff]:
        """Compare the candidate's outputs in `filename` with the reference's outputs of trial `index` (under the
        run's profile, and counting mismatches under the others in the same pass)."""
        native = reference.result.trials[index].outputs
        ref_values, ref_arrays = compare.read_packed(reference.entry / protocol.outputs_file(index))
        cand_meta, cand_arrays = compare.read_packed(job_dir / filename)
        return compare.compare_outputs(
            native, ref_values, ref_arrays, cand_meta, cand_arrays, run.tolerances, run.alternatives
        )

    def _reference(self, task: Task, case: Case, options: EvalOptions) -> _Reference:
        key = reference_key(task.sha256, case.key(), options.seed, options.trials, options.device, options.module_mode)
        with self.cache.lock(key):
            entry = self.cache.get(key)
            if entry is None:
                spec = JobSpec(
                    mode="reference",
                    device=options.device,
                    task_source=task.source_with(case.overrides),
                    task_path=str(task.path),
                    init_seed=_seed(options.seed, case, "init"),
                    trial_seeds=[_seed(options.seed, case, f"trial{i}") for i in range(options.trials)],
                    timing=options.timing,
                    timing_budget_ms=options.timing_budget_ms,
                    input_scale=case.inputs.scale if case.inputs else 1.0,
                    input_shift=case.inputs.shift if case.inputs else 0.0,
                    input_pattern=case.inputs.pattern if case.inputs else None,
                    module_mode=options.module_mode,
                    cuda_emulation=options.emulates_cuda and _asks_for_cuda(task),
                )
                with self._job(spec, self._limits(options)) as (result, outcome, job_dir):
                    if result is None or result.error is not None or len(result.trials) != options.trials:
                        raise ReferenceError_(task_failure(task, f"the reference on case {case.name}", result, outcome))
                    shutil.rmtree(job_dir / WORK_DIR, ignore_errors=True)
                    entry = self.cache.put(key, job_dir)
        result = _read_result(entry)
        if result is None:
            raise ReferenceError_(f"the cached reference {entry} is unreadable; run `kope cache clear`")
        return _Reference(entry=entry, result=result)

    @contextlib.contextmanager
    def _job(
        self,
        spec: JobSpec,
        limits: SandboxLimits,
        *,
        files: Mapping[str, Path] | None = None,
        source: str | None = None,
        sealed: bool = False,
    ) -> Iterator[tuple[WorkerResult | None, Outcome, Path]]:
        """Run one job in a fresh directory, yield (result, outcome, directory), then remove it.

        `sealed` (candidate jobs): the result is the one the worker sent through the sealed channel, which
        the supervisor wrote into `SEALED_DIR` after every process of the job had died; nothing else counts."""
        job_dir = self.scratch / f"job-{uuid.uuid4().hex[:12]}"
        job_dir.mkdir(parents=True)
        try:
            (job_dir / protocol.SPEC_FILE).write_text(spec.model_dump_json())
            if source is not None:
                (job_dir / protocol.CANDIDATE_FILE).write_text(source)
            for name, path in (files or {}).items():
                (job_dir / name).parent.mkdir(exist_ok=True)
                shutil.copyfile(path, job_dir / name)
            outcome = self.runner.run(job_dir, limits)
            if outcome.sandbox_refused:
                missing = "; ".join(outcome.sandbox.missing) if outcome.sandbox else "no report"
                raise SandboxError(
                    f"--sandbox strict: this machine cannot set up the namespace sandbox ({missing}); "
                    "run `kope doctor` to see why, or use --sandbox auto"
                )
            results = job_dir / SEALED_DIR if sealed else job_dir
            yield (_read_result(results) if outcome.sealed or not sealed else None), outcome, job_dir
        finally:
            shutil.rmtree(job_dir, ignore_errors=True)


def case_artifacts(artifacts: Path, case: Case) -> Path:
    """Where `evaluate(..., artifacts=...)` keeps a case's files: `outputs_N.safetensors` (the
    candidate's outputs of trial N) and `reference.txt` (the directory of the reference run)."""
    return artifacts / hashlib.sha256(case.key().encode()).hexdigest()[:16]


def _keep_artifacts(artifacts: Path, case: Case, job_dir: Path, reference: Path) -> None:
    target = case_artifacts(artifacts, case)
    target.mkdir(parents=True, exist_ok=True)
    (target / "reference.txt").write_text(str(reference))
    for produced in job_dir.glob("outputs_*.safetensors"):
        with contextlib.suppress(OSError, ValueError):
            protocol.check_job_file(produced)
            shutil.copyfile(produced, target / produced.name)


def _read_result(job_dir: Path) -> WorkerResult | None:
    try:
        return WorkerResult.model_validate_json(protocol.read_job_text(job_dir / protocol.RESULT_FILE))
    except (OSError, ValidationError, ValueError):
        return None


def _read_candidate(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise CandidateFileError(f"candidate file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CandidateFileError(f"cannot read candidate file {path}: {exc}") from None


def _asks_for_cuda(task: Task) -> bool:
    """Whether a task file names CUDA itself (`device='cuda'` in `get_inputs`): only then do its reference and shapes
    jobs run under `cuda.task_device`, whose per-call hook would otherwise sit on every reference's hot path (and in
    its timing)."""
    return "cuda" in task.source


def _as_tuple(value: object) -> object:
    """A size that crossed JSON (a list) compared as the tuple it was."""
    return tuple(_as_tuple(v) for v in value) if isinstance(value, list | tuple) else value


def _seed(base: int, case: Case, purpose: str) -> int:
    digest = hashlib.sha256(f"{base}:{case.key()}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF
