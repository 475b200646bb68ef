"""The extraction of a diagnosis's features (kope.knowledge.features) from its cases, signatures and probes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kope.diagnose.signature import OutputSignature
from kope.knowledge.features import Features

if TYPE_CHECKING:
    from kope.diagnose.report import CaseDiagnosis, Diagnosis
    from kope.protocol.results import EvalResult


def extract_features(diagnosis: Diagnosis, result: EvalResult, blocks: set[int]) -> Features:
    """The features of a diagnosis: of its cases, its first failing output, and its probes."""
    cases = diagnosis.cases
    failing = [c for c in cases if not c.passed]
    features: dict[str, Any] = {
        "status": result.status,
        "error_kind": result.error.kind if result.error else None,
        "visible_fails": any(c.visible and not c.passed for c in cases),
        "hidden_only": diagnosis.fails_elsewhere
        or (any(c.visible and c.passed for c in cases) and any(not c.visible and not c.passed for c in cases)),
        "all_cases_fail": bool(cases) and all(not c.passed for c in cases),
        "failing_case_fraction": len(failing) / len(cases) if cases else 0.0,
    }
    ones = [c for c in cases if _has_size_one(c.overrides)]
    features["fails_size_one"] = any(not c.passed for c in ones)
    features["only_size_one_fails"] = bool(failing) and all(_has_size_one(c.overrides) for c in failing)
    if blocks:

        def aligned(case: CaseDiagnosis) -> bool:
            return all(v % min(blocks) == 0 for v in _ints(case.overrides) if v > 1)

        passing = [c for c in cases if c.passed]
        features["fails_non_multiple"] = (
            bool(failing)
            and all(not aligned(c) for c in failing)
            and (not passing or any(aligned(c) or not any(v > 1 for v in _ints(c.overrides)) for c in passing))
        )
        biggest = max(blocks)
        features["fails_above_block"] = bool(failing) and all(
            max(_ints(c.overrides), default=0) > biggest for c in failing
        )
    features["fails_only_larger"] = _fails_only_larger(cases)
    growth = [(c.signature.numel, c.signature.max_rel_err) for c in failing if c.signature is not None]
    if len(growth) >= 2:
        errors = [error for _, error in sorted(growth)]
        growing = all(b >= a for a, b in itertools.pairwise(errors))
        features["error_grows_with_size"] = growing and errors[-1] > errors[0]
    primary = next((c for c in failing if c.visible and c.signature), None) or next(
        (c for c in failing if c.signature), None
    )
    if primary is not None and primary.signature is not None:
        features.update(_signature_features(primary.signature, blocks, _ints(primary.overrides)))
    features["oob_loads"] = sum(b.lanes > 0 for b in diagnosis.bounds if b.kind == "load")
    features["oob_stores"] = sum(b.lanes > 0 for b in diagnosis.bounds if b.kind in ("store", "atomic"))
    determinism = next((p for p in diagnosis.probes if p.name == "determinism"), None)
    if determinism is not None and determinism.passed is not None:
        features["nondeterministic"] = not determinism.passed
    _sweep_features(features, diagnosis, blocks)
    _structured_features(features, diagnosis)
    layout = {p.name: p.passed for p in diagnosis.probes if p.name.startswith("layout ")}
    if layout and features.get("visible_fails"):
        features["square_right"] = layout.get("layout square") is True
        features["symmetric_right"] = (
            layout.get("layout square") is False and layout.get("layout square-symmetric") is True
        )
    return Features.model_validate(features)


def _signature_features(sig: OutputSignature, blocks: set[int], sizes: Sequence[int] = ()) -> dict[str, Any]:
    """Features of one output's signature; `sizes` are the case's size parameters (reduced
    dimensions do not appear in the output's shape)."""
    tags = set(sig.structure)
    features: dict[str, Any] = {
        "mismatch_fraction": sig.mismatch_fraction,
        "max_abs_err": sig.max_abs_err,
        "max_rel_err": sig.max_rel_err,
        "nan_fraction": sig.nan_count / sig.mismatch_count if sig.mismatch_count else 0.0,
        "inf_count": sig.inf_count,
        "tail": "tail" in tags,
        "head": "head" in tags,
        "whole_rows": "whole-rows" in tags,
        "rows_from": "rows-from" in tags,
        "whole_columns": "whole-columns" in tags,
        "periodic": "periodic" in tags,
        "prefix_correct": "prefix-correct" in tags,
        "single_element": "single-element" in tags,
        "scalar_output": sig.numel == 1,
        "all_wrong": "all" in tags,
        "nan_output": "nan" in tags,
        "scaled": "scaled" in tags,
        "offset": "offset" in tags,
        "shifted": "shifted" in tags,
        "transposed": sig.transposed,
        "permuted": sig.permuted,
        "error_column_correlation": sig.error_column_correlation,
    }
    if sig.reference_scale > 0:
        features["error_ratio"] = sig.mean_abs_err / sig.reference_scale
        features["small_error"] = (
            features["error_ratio"] < 0.02 and sig.mismatch_fraction >= 0.3 and not sig.nan_count and not sig.inf_count
        )
    features["tail_aligned"] = bool(sig.tail_start and any(sig.tail_start % b == 0 for b in blocks))
    features["period_matches_block"] = sig.period is not None and sig.period in blocks
    if sig.scale is not None:
        features["scale"] = sig.scale
        features["scale_is_size_ratio"] = _is_size_ratio(sig.scale, [*sig.shape, *sizes], blocks)
    return features


def _is_size_ratio(scale: float, shape: list[int], blocks: set[int]) -> bool:
    """Whether c is a ratio of sizes, block sizes (also the power of two a size rounds up to), ±1."""
    sizes = {n for n in shape if n > 1} | {next_pow2(n) for n in shape if n > 1} | set(blocks)
    candidates = sizes | {n - 1 for n in sizes} | {n + 1 for n in sizes} | {1, 2}
    return any(b and abs(scale - a / b) <= 1e-3 * abs(scale) for a in candidates for b in candidates if a != b)


def _structured_features(features: dict[str, Any], diagnosis: Diagnosis) -> None:
    outcomes = {
        probe.name.removeprefix("inputs "): probe.passed
        for probe in diagnosis.probes
        if probe.name.startswith("inputs ") and probe.passed is not None
    }
    if not outcomes:
        return
    features["ones_fail"] = outcomes.get("ones") is False
    features["zeros_fail"] = outcomes.get("zeros") is False
    features["structured_fail"] = any(outcomes.get(name) is False for name in ("ones", "zeros", "arange", "onehot"))
    visible_right = not features.get("visible_fails", False)
    features["large_values_fail"] = outcomes.get("large") is False and (
        visible_right or all(outcomes.get(name) for name in ("ones", "zeros", "arange", "onehot"))
    )


def _sweep_features(features: dict[str, Any], diagnosis: Diagnosis, blocks: set[int]) -> None:
    results: list[tuple[int, bool]] = []
    for probe in diagnosis.probes:
        if probe.name.startswith("size ") and probe.passed is not None:
            try:
                results.append((int(probe.name.rsplit("=", 1)[1]), probe.passed))
            except ValueError:
                continue
    if not results or not blocks:
        return
    block = min(blocks)
    off = [ok for size, ok in results if size % block and size > 1]
    on = [ok for size, ok in results if size % block == 0]
    features["sweep_fails_off_block"] = bool(off) and not any(off) and bool(on) and all(on)
    above = [ok for size, ok in results if size > max(blocks)]
    below = [ok for size, ok in results if size <= max(blocks)]
    features["sweep_fails_above_block"] = bool(above) and not any(above) and bool(below) and all(below)
    features["sweep_fails_at_one"] = any(size == 1 and not ok for size, ok in results)
    features["sweep_all_fail"] = len(results) >= 3 and not any(ok for _, ok in results)
    features["sweep_all_pass"] = len(results) >= 3 and all(ok for _, ok in results)


def _ints(overrides: dict[str, Any]) -> list[int]:
    values: list[int] = []
    for value in overrides.values():
        if isinstance(value, int) and not isinstance(value, bool):
            values.append(value)
        elif isinstance(value, tuple | list):
            values += [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
    return values


def _fails_only_larger(cases: Sequence[CaseDiagnosis]) -> bool:
    """Whether every failing case gives wrong values (no error) and is larger than every passing case (`_larger`): a
    version right on the shown case and wrong on a larger one (kope's search shows it the smallest it found)."""
    passing = [c for c in cases if c.passed]
    failing = [c for c in cases if not c.passed]
    return (
        bool(passing)
        and bool(failing)
        and all(c.error_kind is None for c in failing)
        and all(_larger(f.overrides, p.overrides) for f in failing for p in passing)
    )


def _larger(sizes: dict[str, Any], than: dict[str, Any]) -> bool:
    """Whether a case's sizes are each at least another's, one of them more; no overrides are the task's own sizes,
    which every derived case is shrunk from."""
    if not sizes:
        return bool(than)
    mine, theirs = _ints(sizes), _ints(than)
    return (
        set(sizes) == set(than)
        and len(mine) == len(theirs)
        and mine != theirs
        and all(a >= b for a, b in zip(mine, theirs, strict=True))
    )


def _has_size_one(overrides: dict[str, Any]) -> bool:
    return 1 in _ints(overrides)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())
