"""Turn a failed evaluation into evidence, and evidence into ranked hypotheses.

1. Evaluate the candidate on every case, keeping its outputs.
2. For each failing case, compute the mismatch signature of its first wrong output.
3. Probes, each sandboxed like an evaluation: the bounds checker on failing cases, a determinism
   rerun, a sweep of sizes around the kernel's block sizes, and structured inputs (ones, zeros,
   arange, one-hot, large values).
4. Features (kope.knowledge.features, measured by kope.diagnose.extract) and code cues
   (kope.bugs.cue) go to retrieval, which ranks the knowledge base's patterns.
"""

from __future__ import annotations

import ast
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from kope import syntax
from kope.bugs.cue import CueHit, detect
from kope.cases.task import Case, Task, load_task
from kope.cases.tolerance import tolerance_for
from kope.diagnose.extract import extract_features, next_pow2
from kope.diagnose.report import CaseDiagnosis, Diagnosis, Probe
from kope.diagnose.signature import signature
from kope.errors import ReferenceError_
from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.compare import leaves, read_packed
from kope.evaluate.evaluator import case_artifacts
from kope.knowledge.base import KnowledgeBase
from kope.knowledge.retrieval import rank
from kope.protocol import WorkerResult
from kope.protocol.inputs import InputTransform
from kope.protocol.results import CaseResult, EvalResult

DiagnosisProgress = Callable[[str], None]


SHOWN = 5
"""Hypotheses a diagnosis shows (and prompts carry); the rest are `Diagnosis.later_hypotheses`."""

PROBE_WORKERS = 2
"""Probes run at once (each is its own sandboxed job; the evaluator's reference cache and fork server are shared)."""
_LEAST_PROBE_S = 5.0
"""Under a probe budget, a probe with less time than this left is skipped: it could not finish."""


class Diagnoser:
    def __init__(self, evaluator: Evaluator, knowledge: KnowledgeBase | None = None) -> None:
        self.evaluator = evaluator
        self.knowledge = knowledge if knowledge is not None else KnowledgeBase.load()

    def diagnose(
        self,
        task: Task | str | Path,
        candidate: str | Path,
        *,
        options: EvalOptions | None = None,
        cases: Sequence[Case] | None = None,
        probes: bool = True,
        progress: DiagnosisProgress | None = None,
        plot: Path | None = None,
        sweep_if_passing: bool = False,
        probe_seconds: float | None = None,
    ) -> Diagnosis:
        """Diagnose `candidate`; `plot`: also write a heatmap of the first failing output (PNG).

        `probe_seconds`: the most the probes may take together (a repair run's budget; default: no bound beyond
        each run's time limit). A probe not started by then is skipped, one started gets the time left as its
        limit, and a probe that outlives a limit cut so says nothing (it is dropped, not counted wrong).

        `sweep_if_passing`: when every given case passes, still try sizes around the kernel's block
        sizes; if some fail, diagnose those (the status becomes `fail`). The repair loop uses it when
        a kernel is right on the cases it was shown but fails hidden ones, without revealing them.
        """
        began = time.monotonic()
        task = task if isinstance(task, Task) else load_task(task)
        options = options or EvalOptions()
        candidate_path = Path(candidate).resolve()
        source = candidate_path.read_text(errors="replace")
        blocks = block_sizes(source)
        say = progress or (lambda message: None)
        all_cases = list(cases) if cases is not None else self.evaluator.cases(task, options=options)
        scratch = Path(tempfile.mkdtemp(prefix="kope-diagnose-", dir=self.evaluator.scratch))
        try:
            say("evaluating every case")
            result = self.evaluator.evaluate(task, candidate_path, options=options, cases=all_cases, artifacts=scratch)
            diagnosis = Diagnosis(
                status=result.status,
                task=str(task.path),
                candidate=str(candidate_path),
                blocks=sorted(blocks),
                error=f"{result.error.kind}: {result.error.message}" if result.error else None,
                evaluation=result,
            )
            tolerances = self.evaluator.tolerances(task, options)
            by_name = {c.name: c for c in all_cases}
            # cases derived again at a smaller budget (the interpreter's retries) are not among `all_cases`
            by_name.update({r.name: _ran(r) for r in result.cases if r.name not in by_name})
            for case_result in result.cases:
                diagnosis.cases.append(
                    _case_diagnosis(case_result, by_name[case_result.name], scratch, tolerances, blocks)
                )
            if result.status == "pass" and sweep_if_passing:
                say("trying other sizes")
                swept = self._sweep(diagnosis, task, candidate_path, options, all_cases, blocks, scratch, tolerances)
                by_name.update({c.name: c for c in swept})
                self._structured(diagnosis, task, candidate_path, options, all_cases)
                diagnosis.status = "fail"
                diagnosis.fails_elsewhere = True
            if diagnosis.status == "pass":
                diagnosis.seconds = round(time.monotonic() - began, 3)
                return diagnosis
            if plot is not None:
                self._plot(diagnosis, by_name, scratch, tolerances, blocks, plot)
            if probes:
                until = None if probe_seconds is None else time.monotonic() + probe_seconds
                known = list(by_name.values())
                self._probes(diagnosis, task, candidate_path, options, known, result, blocks, say, until=until)
            features = extract_features(diagnosis, result, blocks)
            hits = detect(source)
            diagnosis.cues = hits
            diagnosis.features = features
            say("ranking hypotheses")
            ranked = rank(self.knowledge, features, hits, text=_query_text(diagnosis, hits), limit=len(self.knowledge))
            diagnosis.hypotheses, diagnosis.later_hypotheses = ranked[:SHOWN], ranked[SHOWN:]
            diagnosis.seconds = round(time.monotonic() - began, 3)
            return diagnosis
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _sweep(
        self,
        diagnosis: Diagnosis,
        task: Task,
        candidate: Path,
        options: EvalOptions,
        cases: list[Case],
        blocks: set[int],
        scratch: Path,
        tolerances: Any,
    ) -> list[Case]:
        """Evaluate sizes around the block sizes and add them to the diagnosis as (hidden) cases."""
        sweep = sweep_cases(task, cases, blocks)
        if not sweep:
            return []
        quick = _replace(options, trials=1, integrity=False)
        by_name = {c.name: c for c in sweep}
        for case_result in self._valid(task, candidate, quick, sweep, artifacts=scratch):
            diagnosis.cases.append(_case_diagnosis(case_result, by_name[case_result.name], scratch, tolerances, blocks))
            outcome = "right" if case_result.passed else "wrong"
            diagnosis.probes.append(Probe(name=f"size {case_result.name}", passed=case_result.passed, detail=outcome))
        return sweep

    def _probes(
        self,
        diagnosis: Diagnosis,
        task: Task,
        candidate: Path,
        options: EvalOptions,
        cases: list[Case],
        result: EvalResult,
        blocks: set[int],
        say: DiagnosisProgress,
        *,
        until: float | None = None,
    ) -> None:
        """The probes are independent sandboxed runs: they run `PROBE_WORKERS` at a time, and their findings are
        recorded in one fixed order (bounds, determinism, sizes, structured inputs, layout) whatever finishes
        first. `until`: the monotonic time by which they must end (see `diagnose`'s `probe_seconds`)."""
        quick = EvalOptions(
            device=options.device,
            trials=1,
            seed=options.seed,
            timeout_s=options.timeout_s,
            memory_mb=options.memory_mb,
            integrity=False,
            sandbox=options.sandbox,
            tolerance=options.tolerance,
        )
        failing = [c for c in diagnosis.cases if not c.passed and c.error_kind is None] or [
            c for c in diagnosis.cases if not c.passed
        ]
        by_name = {c.name: c for c in cases}
        targets = [by_name[c.name] for c in failing[:2] if c.name in by_name]
        Job = Callable[[EvalOptions, EvalOptions], tuple[list[Probe], list[Any]]]  # (quick, full) options in
        runs: list[tuple[str, Job]] = []
        if options.device == "cpu" and targets:
            runs.append(("checking bounds", lambda q, _: self._bounds(task, candidate, q, targets)))
        if targets and failing[0].error_kind is None:
            runs.append(
                ("rerunning for determinism", lambda q, _: ([self._determinism(task, candidate, q, targets[0])], []))
            )
        sweep = sweep_cases(task, cases, blocks, failing=[c.name for c in result.cases if not c.passed])
        if sweep:
            message = f"sweeping {len(sweep)} sizes around the block size"
            runs.append((message, lambda q, _: (self._sizes(task, candidate, q, sweep), [])))
        if not any(p.name.startswith("inputs ") for p in diagnosis.probes):
            structured = structured_cases(cases)
            runs.append(
                (
                    "trying structured inputs",
                    lambda _, o: (self._probe_list(task, candidate, o, structured, "inputs"), []),
                )
            )
        if failing and failing[0].error_kind is None and failing[0].visible:
            # The visible case with its sizes made equal, random then symmetric inputs: right on square shapes,
            # a stride or broadcast of the wrong dimension; right only on symmetric operands, one read transposed.
            square = square_cases(cases)
            runs.append(
                ("trying square sizes", lambda _, o: (self._probe_list(task, candidate, o, square, "layout"), []))
            )

        def run(job: tuple[str, Job]) -> tuple[list[Probe], list[Any]]:
            left = None if until is None else until - time.monotonic()
            if left is not None and left < _LEAST_PROBE_S:
                say(f"{job[0]}: skipped (the repair's time budget)")
                return [], []
            say(job[0])
            if left is None or left >= options.timeout_s:
                return job[1](quick, options)
            probes, bounds = job[1](_replace(quick, timeout_s=left), _replace(options, timeout_s=left))
            return [p for p in probes if p.detail != "wrong (timeout)"], bounds

        with ThreadPoolExecutor(max_workers=PROBE_WORKERS, thread_name_prefix="kope-probe") as pool:
            for probes, bounds in pool.map(run, runs):
                diagnosis.bounds.extend(bounds)
                diagnosis.probes.extend(probes)

    def _bounds(
        self, task: Task, candidate: Path, quick: EvalOptions, targets: list[Case]
    ) -> tuple[list[Probe], list[Any]]:
        checked = self.evaluator.evaluate(task, candidate, options=_replace(quick, bounds_check=True), cases=targets)
        bounds = [event for case_result in checked.cases for event in case_result.bounds]
        probe = Probe(
            name="bounds",
            passed=not bounds,
            detail=f"{len(bounds)} out-of-bounds access site(s)"
            if bounds
            else "every load and store stayed inside its tensors",
        )
        return [probe], bounds

    def _sizes(self, task: Task, candidate: Path, quick: EvalOptions, sweep: list[Case]) -> list[Probe]:
        found = []
        for case_result in self._valid(task, candidate, quick, sweep):
            outcome = (
                "right"
                if case_result.passed
                else (f"wrong ({case_result.error.kind})" if case_result.error else "wrong")
            )
            found.append(Probe(name=f"size {case_result.name}", passed=case_result.passed, detail=outcome))
        return found

    def _valid(
        self, task: Task, candidate: Path, options: EvalOptions, cases: list[Case], *, artifacts: Path | None = None
    ) -> list[CaseResult]:
        """The results of probe cases kope made (sizes around a block, square sizes, structured inputs), without
        those where the reference itself cannot run (a LayerNorm over the last dimension at another width): such a
        probe says nothing about the kernel, and must not end the diagnosis."""
        try:
            return self.evaluator.evaluate(task, candidate, options=options, cases=cases, artifacts=artifacts).cases
        except ReferenceError_:
            if len(cases) == 1:
                return []
        found: list[CaseResult] = []
        for case in cases:
            found += self._valid(task, candidate, options, [case], artifacts=artifacts)
        return found

    def _structured(
        self, diagnosis: Diagnosis, task: Task, candidate: Path, options: EvalOptions, cases: list[Case]
    ) -> None:
        """Rerun the visible case with structured inputs (ones, zeros, arange, one-hot, x100)."""
        diagnosis.probes.extend(self._probe_list(task, candidate, options, structured_cases(cases), "inputs"))

    def _probe_list(
        self, task: Task, candidate: Path, options: EvalOptions, probes: list[Case], kind: str
    ) -> list[Probe]:
        """Run probe cases once, without the gates: one `Probe` named `KIND CASE` each."""
        if not probes:
            return []
        quick = _replace(options, trials=1, integrity=False)
        found = []
        for case_result in self._valid(task, candidate, quick, probes):
            outcome = (
                "right"
                if case_result.passed
                else (
                    f"wrong ({case_result.error.kind})"
                    if case_result.error
                    else f"wrong ({(case_result.mismatch_fraction or 0):.0%} of elements)"
                )
            )
            found.append(Probe(name=f"{kind} {case_result.name}", passed=case_result.passed, detail=outcome))
        return found

    def _plot(
        self,
        diagnosis: Diagnosis,
        cases: dict[str, Case],
        scratch: Path,
        tolerances: Any,
        blocks: set[int],
        path: Path,
    ) -> None:
        from kope.diagnose.plot import heatmap

        primary = next((c for c in diagnosis.cases if c.signature and c.visible), None) or next(
            (c for c in diagnosis.cases if c.signature), None
        )
        if primary is None or primary.trial is None or primary.output is None:
            return
        pair = _load_pair(scratch, cases[primary.name], primary.trial, primary.output)
        if pair is None:
            return
        reference, candidate, dtype = pair
        tol = tolerance_for(dtype, tolerances)
        block = max((b for b in blocks if b <= reference.shape[-1]), default=None) if reference.ndim else None
        heatmap(reference, candidate, tol.atol, tol.rtol, path, block=block, title=f"case {primary.name}")

    def _determinism(self, task: Task, candidate: Path, options: EvalOptions, case: Case) -> Probe:
        runs: list[list[np.ndarray]] = []
        for _ in range(2):
            with tempfile.TemporaryDirectory(dir=self.evaluator.scratch) as keep:
                self.evaluator.evaluate(task, candidate, options=options, cases=[case], artifacts=Path(keep))
                try:
                    meta, arrays = read_packed(case_artifacts(Path(keep), case) / "outputs_0.safetensors")
                except ValueError:
                    return Probe(name="determinism", passed=None, detail="no outputs to compare")
                runs.append([leaf.array for leaf in leaves(meta, arrays) if leaf.array is not None])
        same = len(runs[0]) == len(runs[1]) and all(
            a.shape == b.shape and np.array_equal(a, b, equal_nan=True) for a, b in zip(*runs, strict=True)
        )
        return Probe(
            name="determinism",
            passed=same,
            detail="two identical runs agree bit for bit" if same else "two identical runs gave different outputs",
        )


def _replace(options: EvalOptions, **changes: Any) -> EvalOptions:
    from dataclasses import replace

    return replace(options, **changes)


def _case_diagnosis(
    case_result: CaseResult, case: Case, scratch: Path, tolerances: Any, blocks: set[int]
) -> CaseDiagnosis:
    diagnosis = CaseDiagnosis(
        name=case_result.name,
        visible=case_result.visible,
        overrides=dict(case_result.overrides),
        passed=case_result.passed,
        error_kind=case_result.error.kind if case_result.error else None,
    )
    if case_result.passed or case_result.error is not None:
        return diagnosis
    folder = case_artifacts(scratch, case)
    try:
        entry = Path((folder / "reference.txt").read_text())
        reference = WorkerResult.model_validate_json((entry / "result.json").read_text())
    except (OSError, ValueError):
        return diagnosis
    for trial in range(len(reference.trials)):
        try:
            ref_meta, ref_arrays = read_packed(entry / f"outputs_{trial}.safetensors")
            cand_meta, cand_arrays = read_packed(folder / f"outputs_{trial}.safetensors")
        except ValueError:
            continue
        native = [m for m in _meta_leaves(reference.trials[trial].outputs)]
        for index, (ref, cand) in enumerate(
            zip(leaves(ref_meta, ref_arrays), leaves(cand_meta, cand_arrays), strict=False)
        ):
            if ref.array is None or cand.array is None or ref.array.shape != cand.array.shape:
                continue
            dtype = native[index].dtype if index < len(native) and native[index].dtype else "float32"
            tol = tolerance_for(dtype, tolerances)
            sig = signature(ref.array, cand.array, tol.atol, tol.rtol, blocks)
            if sig.mismatch_count:
                diagnosis.signature, diagnosis.output, diagnosis.trial = sig, index, trial
                return diagnosis
    return diagnosis


def _load_pair(scratch: Path, case: Case, trial: int, output: int) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The reference and candidate arrays of one output of one trial, with the output's dtype."""
    folder = case_artifacts(scratch, case)
    try:
        entry = Path((folder / "reference.txt").read_text())
        reference = WorkerResult.model_validate_json((entry / "result.json").read_text())
        ref_meta, ref_arrays = read_packed(entry / f"outputs_{trial}.safetensors")
        cand_meta, cand_arrays = read_packed(folder / f"outputs_{trial}.safetensors")
    except (OSError, ValueError):
        return None
    refs, cands = leaves(ref_meta, ref_arrays), leaves(cand_meta, cand_arrays)
    native = _meta_leaves(reference.trials[trial].outputs)
    if output >= min(len(refs), len(cands)) or refs[output].array is None or cands[output].array is None:
        return None
    dtype = native[output].dtype if output < len(native) and native[output].dtype else "float32"
    return refs[output].array, cands[output].array, dtype  # type: ignore[return-value]


def _meta_leaves(meta: Any) -> list[Any]:
    if meta.type in ("tuple", "list", "dict"):
        return [leaf for item in meta.items for leaf in _meta_leaves(item)]
    return [meta]


def block_sizes(source: str) -> set[int]:
    """Power-of-two integer literals (16 to 65536) of the file: the kernel's likely block sizes."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError):
        return set()
    found = set()
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else None
        if type(value) is int and 16 <= value <= 65536 and value & (value - 1) == 0:
            found.add(value)
    return found


def sweep_cases(
    task: Task, cases: Sequence[Case], blocks: set[int], failing: Sequence[str] = (), limit: int = 7
) -> list[Case]:
    """Cases around the kernel's block sizes (block - 1, block, block + 1, and a prime) for one size of the
    visible case: the one whose value differs most between failing and passing cases, else the largest.
    Cases already evaluated are skipped."""
    visible = next((c for c in cases if c.visible), cases[0] if cases else None)
    if visible is None:
        return []
    sizes = {k: v for k, v in visible.overrides.items() if isinstance(v, int) and not isinstance(v, bool) and v > 1}
    if not sizes:
        sizes = {k: v for k, v in task.literal_sizes.items() if isinstance(v, int) and v > 1}
    if not sizes:
        return []
    name = _telling_size(cases, sizes, failing)
    base = dict(visible.overrides)
    values: list[int] = []
    for block in sorted(b for b in blocks if b <= 4096)[:2] or [min(1024, next_pow2(sizes[name]))]:
        values += [block - 1, block, block + 1]
    values += [_prime_near(max(3, sizes[name] // 2 + 1))]
    known = {c.key() for c in cases}
    sweep: list[Case] = []
    for value in dict.fromkeys(v for v in values if v >= 1):
        overrides = {**base, name: value}
        case = Case(name=f"{name}={value}", overrides=overrides, visible=False)
        if case.key() not in known:
            sweep.append(case)
    return sweep[:limit]


def _telling_size(cases: Sequence[Case], sizes: dict[str, int], failing: Sequence[str]) -> str:
    """The size whose values best separate failing from passing cases (ties: the largest size)."""
    bad = [c for c in cases if c.name in failing]
    good = [c for c in cases if c.name not in failing]

    def separation(name: str) -> float:
        bad_values = {c.overrides.get(name) for c in bad} - {None}
        good_values = {c.overrides.get(name) for c in good} - {None}
        return float(len(bad_values - good_values)) if bad and good else 0.0

    return max(sizes, key=lambda k: (separation(k), sizes[k]))


STRUCTURED_PATTERNS: tuple[tuple[str, InputTransform], ...] = (
    ("ones", InputTransform(pattern="ones")),
    ("zeros", InputTransform(pattern="zeros")),
    ("arange", InputTransform(pattern="arange")),
    ("onehot", InputTransform(pattern="onehot")),
    ("large", InputTransform(scale=100.0)),
)
"""Input probes: each replaces the visible case's floating-point inputs (integer inputs are kept)."""


def structured_cases(cases: Sequence[Case]) -> list[Case]:
    """The visible case's sizes with structured inputs: ones, zeros, arange, one-hot, and values x100."""
    visible = next((c for c in cases if c.visible), cases[0] if cases else None)
    if visible is None:
        return []
    return [
        Case(name=name, overrides=dict(visible.overrides), visible=False, inputs=transform)
        for name, transform in STRUCTURED_PATTERNS
    ]


def square_cases(cases: Sequence[Case]) -> list[Case]:
    """The visible case with its sizes made equal (the smallest of those of 8 or more; smaller ones, such
    as kernel widths, kept), with random and with symmetric inputs; none when the sizes already agree."""
    visible = next((c for c in cases if c.visible), None)
    if visible is None:
        return []
    sizes = {k: v for k, v in visible.overrides.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 8}
    if len(set(sizes.values())) < 2:
        return []
    common = min(sizes.values())
    overrides = {**visible.overrides, **dict.fromkeys(sizes, common)}
    return [
        Case(name="square", overrides=overrides, visible=False),
        Case(name="square-symmetric", overrides=overrides, visible=False, inputs=InputTransform(pattern="symmetric")),
    ]


def _prime_near(n: int) -> int:
    def prime(k: int) -> bool:
        return k > 1 and all(k % d for d in range(2, math.isqrt(k) + 1))

    while not prime(n):
        n += 1
    return n


def _query_text(diagnosis: Diagnosis, hits: Sequence[CueHit]) -> str:
    words = [diagnosis.error or ""]
    for case in diagnosis.cases:
        if case.signature is not None:
            words += case.signature.structure
    words += [h.cue.replace("-", " ") for h in hits]
    words += [p.detail for p in diagnosis.probes if p.passed is False]
    if diagnosis.bounds:
        words.append("out of bounds mask")
    return " ".join(words)


def _ran(result: CaseResult) -> Case:
    """The case a result was evaluated on, from what the result records of it."""
    return Case(name=result.name, overrides=dict(result.overrides), visible=result.visible, inputs=result.inputs)
