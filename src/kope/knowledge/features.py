"""The named features of a diagnosis (`Features`): the vocabulary knowledge-base symptoms are written in.

Each feature is a number, a boolean or a short string. A symptom in a pattern file names one of
them (`kope kb validate` rejects unknown names) with a predicate and a weight. A feature that was
not measured (no failing output, no probe of its kind) is left unset, and unset features are left
out of the JSON (`signature` in `kope diagnose --json`) and of `Features.measured()`. The
diagnosis measures them (kope.diagnose.extract); the knowledge base and the memory read them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer


class Features(BaseModel):
    """What a diagnosis measured, by name: the central feature vector of the loop.

    Every field is optional: None where it was not measured. Its documentation (the field's
    docstring) is what `FEATURES` holds and what a hypothesis's evidence quotes when a symptom
    has no note of its own.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    # -- the evaluation
    status: str | None = None
    """the evaluation's status: fail or error (a diagnosis of a pass has nothing to explain)"""
    error_kind: str | None = None
    """for status error: the error kind (crash, runtime, shape, timeout...)"""
    visible_fails: bool | None = None
    """the visible case fails"""
    hidden_only: bool | None = None
    """the visible case passes and some hidden case fails"""
    all_cases_fail: bool | None = None
    """every case fails"""
    failing_case_fraction: float | None = None
    """fraction of cases that fail"""
    fails_size_one: bool | None = None
    """a case with a size of 1 fails"""
    only_size_one_fails: bool | None = None
    """the only failing cases have a size of 1"""
    fails_non_multiple: bool | None = None
    """failing cases have sizes that are not multiples of the kernel's block size; the others pass"""
    fails_above_block: bool | None = None
    """cases fail only where a size exceeds the kernel's block size (a missing or short loop)"""
    error_grows_with_size: bool | None = None
    """the error grows with the size of the problem (long reductions, precision)"""
    fails_only_larger: bool | None = None
    """every case that gives wrong values is larger in its sizes than every case that passes: the bug needs sizes
    past some threshold (a capped block, a loop or grid too short, programs sharing an element)"""

    # -- the mismatch signature of the first failing output (the visible case's, if it fails)
    mismatch_fraction: float | None = None
    """fraction of output elements out of tolerance"""
    max_abs_err: float | None = None
    """largest absolute error"""
    max_rel_err: float | None = None
    """largest relative error"""
    nan_fraction: float | None = None
    """fraction of wrong elements that are NaN where the reference is a number"""
    inf_count: int | None = None
    """elements that are infinite where the reference is finite"""
    tail: bool | None = None
    """only the last columns (last dimension) are wrong"""
    head: bool | None = None
    """only the first columns are wrong"""
    whole_rows: bool | None = None
    """wrong rows are wrong everywhere"""
    rows_from: bool | None = None
    """every row from some row on is wrong (a grid too small along rows)"""
    whole_columns: bool | None = None
    """wrong columns are wrong in every row"""
    periodic: bool | None = None
    """the mismatch map repeats with a period"""
    prefix_correct: bool | None = None
    """the first elements in memory order are right, the rest wrong"""
    single_element: bool | None = None
    """exactly one element is wrong"""
    scalar_output: bool | None = None
    """the wrong output has a single element (a full reduction: a loss, a norm, a total)"""
    all_wrong: bool | None = None
    """nearly every element is wrong"""
    nan_output: bool | None = None
    """every wrong element is NaN (often: never written)"""
    scaled: bool | None = None
    """output ≈ c × reference for a constant c"""
    offset: bool | None = None
    """output ≈ reference + d for a constant d"""
    shifted: bool | None = None
    """output ≈ reference shifted by one along an axis"""
    transposed: bool | None = None
    """output ≈ the reference transposed"""
    permuted: bool | None = None
    """the right values in the wrong places"""
    error_column_correlation: float | None = None
    """correlation between the error and the position along the last dimension"""
    error_ratio: float | None = None
    """mean absolute error of the wrong elements over the mean magnitude of the reference"""
    small_error: bool | None = None
    """most elements (30% or more) are wrong, each only slightly (error_ratio below 2%, no NaN or inf): rounding or a
    coefficient, not logic
    """
    tail_aligned: bool | None = None
    """the wrong tail starts at a multiple of the kernel's block size"""
    period_matches_block: bool | None = None
    """the period equals a block size of the kernel"""
    scale: float | None = None
    """the constant c of `scaled`"""
    scale_is_size_ratio: bool | None = None
    """c is close to a ratio of sizes and block sizes (n/BLOCK, n/(n-1)...), counting the case's sizes and the powers
    of two they round up to
    """

    # -- probes
    oob_loads: int | None = None
    """loads outside every tensor of the launch (bounds checker)"""
    oob_stores: int | None = None
    """stores outside every tensor of the launch (bounds checker)"""
    nondeterministic: bool | None = None
    """two identical runs gave different outputs (races, missing atomics)"""
    sweep_fails_off_block: bool | None = None
    """in the size sweep, sizes that are not multiples of the block fail while multiples pass"""
    sweep_fails_above_block: bool | None = None
    """in the size sweep, sizes above the block fail while sizes up to it pass"""
    sweep_fails_at_one: bool | None = None
    """in the size sweep, a size of 1 fails"""
    sweep_all_fail: bool | None = None
    """in the size sweep, every size fails (the bug does not depend on sizes or block alignment)"""
    sweep_all_pass: bool | None = None
    """in the size sweep, every size passes (the bug needs larger sizes or special values)"""
    ones_fail: bool | None = None
    """the all-ones probe fails"""
    zeros_fail: bool | None = None
    """the all-zeros probe fails"""
    structured_fail: bool | None = None
    """a structured-input probe (ones, zeros, arange, one-hot) fails"""
    large_values_fail: bool | None = None
    """inputs scaled up (large magnitudes) fail while the normal ones pass"""
    square_right: bool | None = None
    """the visible case fails, but the same kernel is right when its sizes are made equal (a stride or broadcast of
    the wrong dimension)
    """
    symmetric_right: bool | None = None
    """wrong on square random inputs, right on square symmetric ones (x == x.T): an operand read transposed (strides
    swapped)
    """

    @model_serializer(mode="wrap")
    def _measured_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {name: value for name, value in data.items() if name in self.model_fields_set}

    def measured(self) -> dict[str, Any]:
        """The features that were measured, by name (what symptoms and stored records address)."""
        return self.model_dump()


FEATURES: dict[str, str] = {
    name: " ".join((field.description or "").split()) for name, field in Features.model_fields.items()
}
"""Each feature's description, by name."""
