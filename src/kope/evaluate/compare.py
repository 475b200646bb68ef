"""Compare a candidate's outputs with the reference's, every element, in float64.

Runs in kope's own process, which never imports candidate code. Inputs are the structure the
worker reported (`ValueMeta`) and tensors read from safetensors with numpy (no pickle).

An element of a floating output passes when both are NaN, both are the same infinity, or both are
finite and |candidate - reference| <= atol + rtol * |reference|. Integer and boolean outputs
compare exactly. Dtypes and the structure (tensor, tuple/list of tensors, scalar) must match the
reference run in its own precision.

Shapes must match too, with one exception that keeps a near miss a near miss: a tensor whose values
are right up to a change of shape (a scalar returned as `(1,)`, a unit dimension too many or too
few, the last two dimensions transposed) fails with that fix named (`OutputDiff.shape_fix`) instead
of being an error of kind `shape`. A square output that is right only transposed is named the same
way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file

from kope.cases.tolerance import Tolerance, tolerance_for
from kope.protocol import ValueMeta, check_job_file
from kope.protocol.results import OutputDiff, ToleranceProfile

_PYTHON_FLOAT_DTYPE = "float32"
"""Python float outputs are compared with the float32 tolerance."""


class StructureMismatch(Exception):
    """The outputs differ in structure, shape or dtype: an error of kind `shape`."""


@dataclass(frozen=True)
class Leaf:
    path: str
    meta: ValueMeta
    array: np.ndarray | None
    """The tensor's values, or None for a Python scalar (held in `meta.value`)."""


def read_packed(path: Path) -> tuple[ValueMeta, dict[str, np.ndarray]]:
    """A value packed by a worker: its structure and its tensors as numpy arrays.

    A missing or malformed file raises ValueError.
    """
    try:
        check_job_file(path)
        with safe_open(str(path), framework="np") as handle:
            structure = (handle.metadata() or {}).get("structure")
        arrays = load_file(str(path))
        if structure is None:
            raise ValueError("no structure in its metadata")
        return ValueMeta.model_validate_json(structure), arrays
    except Exception as exc:
        raise ValueError(f"{path.name} is not a readable result file: {exc}") from None


def leaves(meta: ValueMeta, arrays: Mapping[str, np.ndarray], path: str = "output") -> list[Leaf]:
    """Flatten a packed value into its tensors and scalars, checking the files agree with the metadata."""
    if meta.type == "tensor":
        if meta.key is None or meta.key not in arrays:
            raise ValueError(f"{path}: tensor data is missing")
        array = arrays[meta.key]
        if meta.shape is None or list(array.shape) != meta.shape:
            raise ValueError(f"{path}: tensor data does not match its declared shape")
        return [Leaf(path, meta, array)]
    if meta.type in ("tuple", "list"):
        found: list[Leaf] = []
        for index, item in enumerate(meta.items):
            found.extend(leaves(item, arrays, f"{path}[{index}]"))
        return found
    if meta.type == "dict":
        found = []
        for key, item in zip(meta.keys, meta.items, strict=True):
            found.extend(leaves(item, arrays, f"{path}[{key!r}]"))
        return found
    return [Leaf(path, meta, None)]


def describe(meta: ValueMeta) -> str:
    if meta.type == "tensor":
        return f"a {meta.dtype} tensor of shape {tuple(meta.shape or [])}"
    if meta.type in ("tuple", "list"):
        return f"a {meta.type} of {len(meta.items)}"
    if meta.type == "dict":
        return f"a dict with keys {meta.keys}"
    return f"a Python {meta.type}"


def check_structure(reference: ValueMeta, candidate: ValueMeta, path: str = "output", *, shapes: bool = True) -> None:
    """Raise StructureMismatch where the candidate's output is not shaped like the reference's (`shapes` False:
    tensors of other shapes pass here, for the comparison to try a shape fix)."""
    same_kind = reference.type == candidate.type or {reference.type, candidate.type} <= {"tuple", "list"}
    if not same_kind:
        raise StructureMismatch(
            f"{path}: the reference returns {describe(reference)}, the candidate {describe(candidate)}"
        )
    if reference.type == "tensor":
        if shapes and reference.shape != candidate.shape:
            raise StructureMismatch(
                f"{path}: shape {tuple(candidate.shape or [])} where the reference has {tuple(reference.shape or [])}"
            )
        if reference.dtype != candidate.dtype:
            raise StructureMismatch(f"{path}: dtype {candidate.dtype} where the reference has {reference.dtype}")
    elif reference.type in ("tuple", "list", "dict"):
        if len(reference.items) != len(candidate.items) or reference.keys != candidate.keys:
            raise StructureMismatch(
                f"{path}: the reference returns {describe(reference)}, the candidate {describe(candidate)}"
            )
        labels = reference.keys or [str(i) for i in range(len(reference.items))]
        for label, ref_item, cand_item in zip(labels, reference.items, candidate.items, strict=True):
            check_structure(ref_item, cand_item, f"{path}[{label}]", shapes=shapes)


def compare_outputs(
    reference_meta: ValueMeta,
    reference_values: ValueMeta,
    reference_arrays: Mapping[str, np.ndarray],
    candidate_meta: ValueMeta,
    candidate_arrays: Mapping[str, np.ndarray],
    tolerances: Mapping[str, Tolerance] | None = None,
    alternatives: Mapping[ToleranceProfile, Mapping[str, Tolerance]] | None = None,
) -> list[OutputDiff]:
    """Compare every output element; raise StructureMismatch or ValueError (malformed data).

    `reference_meta` describes the reference run in its own precision (dtypes, shapes);
    `reference_values` and `reference_arrays` hold its float64 values. `alternatives`: other profiles'
    tolerances, counted in the same pass (`OutputDiff.mismatches_under`).
    """
    check_structure(reference_meta, candidate_meta, shapes=False)
    ref_leaves = leaves(reference_values, reference_arrays)
    cand_leaves = leaves(candidate_meta, candidate_arrays)
    dtypes = [_leaf_dtype(m) for m in _meta_leaves(reference_meta)]
    if len(ref_leaves) != len(cand_leaves) or len(dtypes) != len(cand_leaves):
        raise ValueError("reference and candidate outputs do not line up")
    return [
        _compare_leaf(
            index,
            ref,
            cand,
            dtype,
            tolerance_for(dtype, tolerances),
            {name: tolerance_for(dtype, table) for name, table in (alternatives or {}).items()},
        )
        for index, (ref, cand, dtype) in enumerate(zip(ref_leaves, cand_leaves, dtypes, strict=True))
    ]


def tensor_dtypes(meta: ValueMeta | None) -> set[str]:
    """The dtypes of the tensors in a packed value's structure."""
    if meta is None:
        return set()
    return {leaf.dtype for leaf in _meta_leaves(meta) if leaf.type == "tensor" and leaf.dtype}


def _meta_leaves(meta: ValueMeta) -> list[ValueMeta]:
    if meta.type in ("tuple", "list", "dict"):
        found: list[ValueMeta] = []
        for item in meta.items:
            found.extend(_meta_leaves(item))
        return found
    return [meta]


def _leaf_dtype(meta: ValueMeta) -> str:
    if meta.type == "tensor":
        return meta.dtype or "float32"
    if meta.type == "float":
        return _PYTHON_FLOAT_DTYPE
    return meta.type


def _as_array(leaf: Leaf) -> np.ndarray:
    if leaf.array is not None:
        return leaf.array
    return np.asarray(leaf.meta.value)


def _compare_leaf(
    index: int, ref: Leaf, cand: Leaf, dtype: str, tol: Tolerance, others: Mapping[ToleranceProfile, Tolerance]
) -> OutputDiff:
    reference = _as_array(ref)
    candidate = _as_array(cand)
    if reference.shape != candidate.shape:
        for fix, fixed in _shape_fixes(reference, candidate):
            diff = _compare_arrays(index, reference, fixed, dtype, tol)
            if not diff.mismatch_count:
                first = [0] * reference.ndim if reference.size else None
                return diff.model_copy(
                    update={
                        "mismatch_count": diff.numel,
                        "mismatches_under": dict.fromkeys(others, diff.numel),
                        "first_mismatch": first,
                        "candidate_shape": list(candidate.shape),
                        "shape_fix": fix,
                    }
                )
        raise StructureMismatch(f"{cand.path}: shape {candidate.shape}{_WHERE_REFERENCE}{reference.shape}")
    diff = _compare_arrays(index, reference, candidate, dtype, tol, others)
    if diff.mismatch_count and reference.ndim >= 2 and reference.shape[-1] == reference.shape[-2] > 1:
        transposed = _compare_arrays(index, reference, np.swapaxes(candidate, -1, -2), dtype, tol)
        if not transposed.mismatch_count:
            return diff.model_copy(update={"shape_fix": _TRANSPOSE})
    return diff


_TRANSPOSE = ".transpose(-2, -1)"
_WHERE_REFERENCE = " where the reference has "
_SHAPE_MISMATCH = re.compile(r"shape \(([\d, ]*)\)" + _WHERE_REFERENCE + r"\(([\d, ]*)\)")
_UNIT_FIX = re.compile(r"^\.(reshape\(\(\)\)|squeeze\(\)|squeeze\(-?\d+\)|unsqueeze\(-?\d+\))$")


def shape_only(message: str) -> bool:
    """Whether a structure error this module raised names a shape (the dtype, checked first, was right)."""
    return _SHAPE_MISMATCH.search(message) is not None


def unit_shape_fix(message: str) -> str | None:
    """For a shape error this module raised (`output: shape (19, 1) where the reference has (19,)`), the change of
    unit dimensions that makes the shapes agree at every size (`.squeeze(-1)`, `.unsqueeze(0)`, `.reshape(())`), or
    the exchange of the last two dimensions where they are exchanged (`(320, 160)` for `(160, 320)`:
    `.transpose(-2, -1)`); None for other errors and other differences. Says nothing of the values: those were not
    compared (a product returned transposed whose K loop is also wrong is right in neither layout)."""
    found = _SHAPE_MISMATCH.search(message)
    if found is None:
        return None
    candidate, reference = (tuple(int(d) for d in group.replace(" ", "").split(",") if d) for group in found.groups())
    if (
        len(candidate) == len(reference) >= 2
        and candidate[:-2] == reference[:-2]
        and candidate[-2:] == reference[-2:][::-1]
        and candidate[-1] != candidate[-2]
    ):
        return _TRANSPOSE
    if len(candidate) == len(reference) + 1 and (axis := _unit_axis(candidate, reference)) is not None:
        return f".squeeze({axis})"  # one named axis: `.squeeze()` would also drop a size that is 1 on another case
    if len(candidate) + 1 == len(reference) and (axis := _unit_axis(reference, candidate)) is not None:
        return f".unsqueeze({axis})"
    fixes = _shape_fixes(np.zeros(reference), np.zeros(candidate))
    return next((fix for fix, _ in fixes if _UNIT_FIX.match(fix)), None)


def _shape_fixes(reference: np.ndarray, candidate: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The shape changes that turn the candidate's shape into the reference's, named as the code that makes them
    (generic forms first: they hold at every size; a literal `.reshape(...)` last)."""
    found: list[tuple[str, np.ndarray]] = []
    ref_shape, cand_shape = reference.shape, candidate.shape
    if candidate.size == reference.size:
        fixed = candidate.reshape(ref_shape)
        squeezed = tuple(d for d in ref_shape if d != 1) == tuple(d for d in cand_shape if d != 1)
        if not ref_shape:
            found.append((".reshape(())", fixed))
        elif squeezed and 1 not in ref_shape:
            found.append((".squeeze()", fixed))
        elif squeezed and len(cand_shape) == len(ref_shape) + 1:
            axis = _unit_axis(cand_shape, ref_shape)
            if axis is not None:
                found.append((f".squeeze({axis})", fixed))
        elif squeezed and len(cand_shape) + 1 == len(ref_shape):
            axis = _unit_axis(ref_shape, cand_shape)
            if axis is not None:
                found.append((f".unsqueeze({axis})", fixed))
    if candidate.ndim >= 2 and candidate.shape[:-2] + candidate.shape[:-3:-1] == ref_shape:
        found.append((_TRANSPOSE, np.swapaxes(candidate, -1, -2)))
    if candidate.size == reference.size and not any(fix == ".reshape(())" for fix, _ in found):
        found.append((f".reshape({', '.join(str(d) for d in ref_shape)})", candidate.reshape(ref_shape)))
    return found


def _unit_axis(longer: tuple[int, ...], shorter: tuple[int, ...]) -> int | None:
    """The axis of `longer` whose removal (a unit dimension) gives `shorter`; negative when it is the last one."""
    for axis in range(len(longer)):
        if longer[axis] == 1 and longer[:axis] + longer[axis + 1 :] == shorter:
            return -1 if axis == len(longer) - 1 and axis > 0 else axis
    return None


def _compare_arrays(
    index: int,
    reference: np.ndarray,
    candidate: np.ndarray,
    dtype: str,
    tol: Tolerance,
    others: Mapping[ToleranceProfile, Tolerance] | None = None,
) -> OutputDiff:
    under: dict[ToleranceProfile, int] = {}
    if reference.dtype.kind in "biuUSO" or candidate.dtype.kind in "biuUSO":
        mismatch = reference != candidate
        abs_err = np.zeros(reference.shape)
        if reference.dtype.kind in "biu" and candidate.dtype.kind in "biu":
            abs_err = np.abs(reference.astype(np.float64) - candidate.astype(np.float64))
        rel_err = (
            abs_err / np.maximum(np.abs(reference.astype(np.float64, copy=False)), 1.0) if abs_err.size else abs_err
        )
        nan_mismatch = 0
    else:
        ref64 = reference.astype(np.complex128 if reference.dtype.kind == "c" else np.float64, copy=False)
        cand64 = candidate.astype(ref64.dtype, copy=False)
        with np.errstate(invalid="ignore", over="ignore"):
            both_finite = np.isfinite(ref64) & np.isfinite(cand64)
            both_nan = np.isnan(ref64) & np.isnan(cand64)
            same_inf = np.isinf(ref64) & np.isinf(cand64) & (ref64 == cand64)
            abs_err = np.where(both_finite, np.abs(cand64 - ref64), 0.0)
            limit = tol.atol + tol.rtol * np.abs(ref64)
            within = both_finite & (abs_err <= limit)
            mismatch = ~(within | both_nan | same_inf)
            nan_mismatch = int(np.count_nonzero(mismatch & ~both_finite))
            rel_err = abs_err / np.maximum(np.abs(ref64), max(tol.atol, 1e-12))
            for name, other in (others or {}).items():
                allowed = both_finite & (abs_err <= other.atol + other.rtol * np.abs(ref64))
                under[name] = int(np.count_nonzero(~(allowed | both_nan | same_inf)))
    count = int(np.count_nonzero(mismatch))
    for name in others or {}:
        under.setdefault(name, count)
    flat_mismatch = np.flatnonzero(mismatch)
    first = _unravel(int(flat_mismatch[0]), reference.shape) if count else None
    worst = _unravel(int(np.argmax(abs_err)), reference.shape) if abs_err.size and float(abs_err.max()) > 0 else None
    return OutputDiff(
        index=index,
        shape=list(reference.shape),
        dtype=dtype,
        numel=int(reference.size),
        mismatch_count=count,
        max_abs_err=float(abs_err.max()) if abs_err.size else 0.0,
        max_rel_err=float(rel_err.max()) if rel_err.size else 0.0,
        mean_abs_err=float(np.abs(abs_err).mean()) if abs_err.size else 0.0,
        first_mismatch=first,
        worst_index=worst,
        nan_mismatch=nan_mismatch,
        atol=tol.atol,
        rtol=tol.rtol,
        mismatches_under=under,
        constant=_constant(reference, candidate) if count else None,
    )


def _constant(reference: np.ndarray, candidate: np.ndarray) -> float | None:
    """The one value of the candidate's elements, where the reference's values vary; else None."""
    if candidate.size < 2 or candidate.dtype.kind not in "biuf" or reference.dtype.kind not in "biuf":
        return None
    first = candidate.flat[0]
    if not np.all(candidate == first) or np.all(reference == reference.flat[0]):
        return None
    return float(first)


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    if not shape:
        return []
    return [int(i) for i in np.unravel_index(flat, shape)]


def summarize(diffs_per_trial: list[list[OutputDiff]]) -> dict[str, Any]:
    """Case-level numbers over every trial and output: worst errors, total mismatches, the worst trial."""
    all_diffs = [d for trial in diffs_per_trial for d in trial]
    numel = sum(d.numel for d in all_diffs)
    count = sum(d.mismatch_count for d in all_diffs)
    worst_trial = max(
        diffs_per_trial,
        key=lambda trial: (sum(d.mismatch_count for d in trial), max((d.max_abs_err for d in trial), default=0.0)),
        default=[],
    )
    fix, notes = _shape_fix(all_diffs)
    notes = notes + _constant_notes(worst_trial)
    return {
        "shape_fix": fix,
        "notes": notes,
        "passed": count == 0,
        "max_abs_err": max((d.max_abs_err for d in all_diffs), default=0.0),
        "max_rel_err": max((d.max_rel_err for d in all_diffs), default=0.0),
        "mismatch_count": count,
        "numel": numel,
        "mismatch_fraction": count / numel if numel else 0.0,
        "outputs": worst_trial,
    }


def _constant_notes(diffs: list[OutputDiff]) -> list[str]:
    """The outputs that hold one value where the reference's vary, said so (the result never reaches them)."""
    return [
        f"output {d.index}: every element is {d.constant:g} where the reference's values vary: "
        "what the kernel computes does not reach this output"
        for d in diffs
        if d.constant is not None
    ]


def _shape_fix(diffs: list[OutputDiff]) -> tuple[str | None, list[str]]:
    """The one shape fix that makes every wrong output of a case right, and the note that says so."""
    wrong = [d for d in diffs if d.mismatch_count]
    fixes = {d.shape_fix for d in wrong}
    if not wrong or len(fixes) != 1 or None in fixes:
        return None, []
    first = wrong[0]
    fix = first.shape_fix
    if first.candidate_shape is not None:
        what = f"shape {tuple(first.candidate_shape)} where the reference has {tuple(first.shape)}"
    else:
        what = "the values are transposed"
    return fix, [f"output {first.index}: {what}; `{fix}` on the returned value makes every element right"]
