"""The mismatch signature: where a wrong output is wrong, and how it relates to the right one.

Computed in kope's own process with numpy, from one output of the candidate and the float64
reference. Structure tags describe the map of mismatched elements (viewed as rows × last dimension):
`tail` (only the last columns), `head`, `whole-rows`, `rows-from` (every row from some row on),
`whole-columns`, `periodic` (the pattern repeats with a period that may match a block size),
`prefix-correct` (the first k elements in memory order are right, the rest wrong), `single-element`,
`all`, `nan` (every wrong element is NaN: often never written). Relations name a bug directly:
`scaled` (output ≈ c × reference), `offset` (≈ reference + d), `shifted` (≈ reference shifted by one
along an axis), `transposed`, `permuted` (the right values in the wrong places).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, Field

_COMMON_BLOCKS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
_CLOSE = 0.95
"""A relation holds when at least this fraction of elements agree under it."""


class Shift(BaseModel):
    axis: int
    amount: int


class OutputSignature(BaseModel):
    shape: list[int]
    numel: int
    mismatch_count: int
    mismatch_fraction: float
    max_abs_err: float
    mean_abs_err: float
    max_rel_err: float
    reference_scale: float = 0.0
    """Mean absolute value of the reference's finite elements (what errors are measured against)."""
    nan_count: int = 0
    """Candidate NaN where the reference is a number."""
    inf_count: int = 0
    reference_nonfinite: int = 0
    structure: list[str] = Field(default_factory=list)
    tail_start: int | None = None
    """With `tail`: the first wrong column of the last dimension."""
    head_end: int | None = None
    """With `head`: one past the last wrong column."""
    rows_from: int | None = None
    period: int | None = None
    prefix: int | None = None
    """With `prefix-correct`: how many leading elements (memory order) are right."""
    rows_wrong_fraction: float | None = None
    columns_wrong_fraction: float | None = None
    first_mismatch: list[int] | None = None
    scale: float | None = None
    offset: float | None = None
    shift: Shift | None = None
    transposed: bool = False
    permuted: bool = False
    error_column_correlation: float | None = None
    """Correlation of the absolute error with the position along the last dimension."""
    region: str | None = None
    """The value region the wrong elements sit in, by the reference's value: `reference < 0`, `reference > 0`,
    `|reference| large` (its largest tenth), `|reference| small` (its smallest tenth): set when nearly every wrong
    element is there and nearly every element elsewhere is right (a formula wrong in one branch or past a threshold)."""


def signature(
    reference: np.ndarray,
    candidate: np.ndarray,
    atol: float,
    rtol: float,
    blocks: Iterable[int] = (),
) -> OutputSignature:
    """The signature of one output; `blocks` are block sizes seen in the kernel (for `periodic`)."""
    ref = np.asarray(reference, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(ref) & np.isfinite(cand)
        err = np.where(finite, np.abs(cand - ref), 0.0)
        ok = (
            (finite & (err <= atol + rtol * np.abs(ref)))
            | (np.isnan(ref) & np.isnan(cand))
            | (np.isinf(ref) & (ref == cand))
        )
        rel = err / np.maximum(np.abs(ref), max(atol, 1e-12))
    bad = ~ok
    count = int(bad.sum())
    numel = int(ref.size)
    wrong_err = err[bad & finite]
    sig = OutputSignature(
        shape=list(ref.shape),
        numel=numel,
        mismatch_count=count,
        mismatch_fraction=count / numel if numel else 0.0,
        max_abs_err=float(err.max()) if numel else 0.0,
        mean_abs_err=float(wrong_err.mean()) if wrong_err.size else 0.0,
        max_rel_err=float(rel.max()) if numel else 0.0,
        reference_scale=float(np.abs(ref[np.isfinite(ref)]).mean()) if np.isfinite(ref).any() else 0.0,
        nan_count=int((np.isnan(cand) & ~np.isnan(ref)).sum()),
        inf_count=int((np.isinf(cand) & np.isfinite(ref)).sum()),
        reference_nonfinite=int((~np.isfinite(ref)).sum()),
    )
    if count == 0 or numel == 0:
        return sig
    first = int(np.flatnonzero(bad.reshape(-1))[0])
    sig.first_mismatch = [int(i) for i in np.unravel_index(first, ref.shape)] if ref.ndim else []
    _structure(sig, bad, blocks)
    _relations(sig, ref, cand, atol, rtol)
    sig.region = value_region(ref, bad)
    return sig


def value_region(ref: np.ndarray, bad: np.ndarray) -> str | None:
    """Where, by the reference's value, the wrong elements are (`OutputSignature.region`); None when nowhere in
    particular (or everywhere)."""
    flat, wrong = ref.reshape(-1), bad.reshape(-1)
    finite = np.isfinite(flat)
    if wrong.sum() == 0 or finite.sum() < 20:
        return None
    magnitude = np.where(finite, np.abs(flat), 0.0)
    low, high = np.quantile(magnitude[finite], [0.1, 0.9])
    regions = (
        ("reference < 0", finite & (flat < 0)),
        ("reference > 0", finite & (flat > 0)),
        ("|reference| large", finite & (magnitude >= high) & (high > low)),
        ("|reference| small", finite & (magnitude <= low) & (high > low)),
    )
    for label, inside in regions:
        if inside.sum() < 0.05 * flat.size or (~inside).sum() == 0:
            continue
        share = wrong[inside].sum() / wrong.sum()
        if share >= 0.9 and wrong[inside].mean() >= 0.5 and wrong[~inside].mean() <= 0.05:
            return label
    return None


def _as_rows(array: np.ndarray) -> np.ndarray:
    if array.ndim == 0:
        return array.reshape(1, 1)
    if array.ndim == 1:
        return array.reshape(1, -1)
    return array.reshape(-1, array.shape[-1])


def _structure(sig: OutputSignature, bad: np.ndarray, blocks: Iterable[int]) -> None:
    tags: list[str] = []
    flat = bad.reshape(-1)
    rows = _as_rows(bad)
    n_rows, n_cols = rows.shape
    bad_rows = rows.any(axis=1)
    bad_cols = np.asarray(rows.any(axis=0))
    sig.rows_wrong_fraction = float(bad_rows.mean())
    sig.columns_wrong_fraction = float(bad_cols.mean())
    if sig.mismatch_count == 1:
        tags.append("single-element")
    if sig.mismatch_fraction > 0.99:
        tags.append("all")
    if sig.nan_count and sig.nan_count >= sig.mismatch_count:
        tags.append("nan")
    wrong_cols = np.flatnonzero(bad_cols)
    if n_cols > 1 and wrong_cols.size and wrong_cols.size < n_cols:
        if wrong_cols[0] > 0 and wrong_cols[-1] == n_cols - 1 and wrong_cols.size == n_cols - wrong_cols[0]:
            tags.append("tail")
            sig.tail_start = int(wrong_cols[0])
        elif wrong_cols[0] == 0 and wrong_cols.size == wrong_cols[-1] + 1:
            tags.append("head")
            sig.head_end = int(wrong_cols[-1] + 1)
    if n_rows > 1 and bad_rows.any():
        full_rows = rows[bad_rows].mean(axis=1) > 0.9
        if full_rows.all():
            tags.append("whole-rows")
        wrong_rows = np.flatnonzero(bad_rows)
        if wrong_rows[0] > 0 and wrong_rows[-1] == n_rows - 1 and wrong_rows.size == n_rows - wrong_rows[0]:
            tags.append("rows-from")
            sig.rows_from = int(wrong_rows[0])
    if n_cols > 1 and n_rows > 1 and bad_cols.any():
        column_share = rows[:, bad_cols].mean(axis=0)
        if (column_share > 0.9).all() and not bad_cols.all():
            tags.append("whole-columns")
    first = int(np.flatnonzero(flat)[0])
    if first > 0 and flat[first:].mean() > 0.9:
        tags.append("prefix-correct")
        sig.prefix = first
    period = _period(bad_cols, blocks) if n_cols > 1 else None
    period = period if period is not None else _period(flat, blocks)
    if period is not None:
        tags.append("periodic")
        sig.period = period
    sig.structure = tags


def _period(flat: np.ndarray, blocks: Iterable[int]) -> int | None:
    """The smallest block-like period with which the mismatch map repeats (and is not uniform)."""
    if flat.all() or not flat.any():
        return None
    for period in sorted({int(b) for b in blocks if b > 1} | set(_COMMON_BLOCKS)):
        repeats = flat.size // period
        if repeats < 2:
            continue
        tiles = flat[: repeats * period].reshape(repeats, period)
        if (tiles == tiles[0]).all() and 0 < tiles[0].sum() < period:
            return period
    return None


def _relations(sig: OutputSignature, ref: np.ndarray, cand: np.ndarray, atol: float, rtol: float) -> None:  # noqa: C901 - one test per relation between the two outputs (scale, shift, sign, transpose...), read top to bottom
    finite = np.isfinite(ref) & np.isfinite(cand)
    if finite.sum() < 2:
        return

    def close(a: np.ndarray, b: np.ndarray) -> bool:
        both = np.isfinite(a) & np.isfinite(b)
        if both.sum() == 0:
            return False
        tolerance = 10 * (atol + rtol * np.abs(b[both]))
        return bool((np.abs(a[both] - b[both]) <= tolerance).mean() >= _CLOSE)

    r, c = ref[finite], cand[finite]
    denominator = float(np.dot(r, r))
    if denominator > 0:
        scale = float(np.dot(c, r) / denominator)
        if abs(scale - 1.0) > 1e-3 and close(cand, scale * ref):
            sig.scale = scale
            sig.structure.append("scaled")
    offset = float(np.median(c - r))
    if abs(offset) > atol and close(cand, ref + offset):
        sig.offset = offset
        sig.structure.append("offset")
    # where the identity already matches (tiny outputs within 10 x atol), a shift or transpose says nothing
    identity = close(cand, ref)
    for axis in range(ref.ndim if not identity else 0):
        if ref.shape[axis] < 3:
            continue
        for amount in (1, -1):
            rolled = np.roll(ref, amount, axis=axis)
            interior = [slice(None)] * ref.ndim
            interior[axis] = slice(1, None) if amount == 1 else slice(None, -1)
            if close(cand[tuple(interior)], rolled[tuple(interior)]):
                sig.shift = Shift(axis=axis if axis < ref.ndim - 1 else -1, amount=amount)
                sig.structure.append("shifted")
                break
        if sig.shift is not None:
            break
    if (
        not identity
        and ref.ndim >= 2
        and ref.shape[-1] == ref.shape[-2]
        and ref.shape[-1] > 1
        and close(cand, np.swapaxes(ref, -1, -2))
    ):
        sig.transposed = True
        sig.structure.append("transposed")
    if not sig.transposed and sig.shift is None and sig.mismatch_fraction > 0.05 and finite.all():
        same_values = np.allclose(np.sort(cand.reshape(-1)), np.sort(ref.reshape(-1)), atol=atol, rtol=rtol)
        if same_values:
            sig.permuted = True
            sig.structure.append("permuted")
    rows_err = _as_rows(np.where(finite, np.abs(cand - ref), 0.0))
    if rows_err.shape[1] > 2 and rows_err.std() > 0:
        columns = np.broadcast_to(np.arange(rows_err.shape[1]), rows_err.shape)
        sig.error_column_correlation = float(np.corrcoef(columns.reshape(-1), rows_err.reshape(-1))[0, 1])
