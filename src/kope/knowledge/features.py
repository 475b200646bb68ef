"""The named features of a diagnosis: the vocabulary knowledge-base symptoms are written in.

Each feature is a number, a boolean or a short string. A symptom in a pattern file names one of
them (`kope kb validate` rejects unknown names) with a predicate and a weight.
"""

from __future__ import annotations

FEATURES: dict[str, str] = {
    # the evaluation
    "status": "the evaluation's status: fail or error (a diagnosis of a pass has nothing to explain)",
    "error_kind": "for status error: the error kind (crash, runtime, shape, timeout...)",
    "visible_fails": "the visible case fails",
    "hidden_only": "the visible case passes and some hidden case fails",
    "all_cases_fail": "every case fails",
    "failing_case_fraction": "fraction of cases that fail",
    "fails_size_one": "a case with a size of 1 fails",
    "only_size_one_fails": "the only failing cases have a size of 1",
    "fails_non_multiple": "failing cases have sizes that are not multiples of the kernel's block size; the others pass",
    "fails_above_block": "cases fail only where a size exceeds the kernel's block size (a missing or short loop)",
    "error_grows_with_size": "the error grows with the size of the problem (long reductions, precision)",
    # the signature of the first failing output
    "mismatch_fraction": "fraction of output elements out of tolerance",
    "max_abs_err": "largest absolute error",
    "max_rel_err": "largest relative error",
    "nan_fraction": "fraction of wrong elements that are NaN where the reference is a number",
    "inf_count": "elements that are infinite where the reference is finite",
    "tail": "only the last columns (last dimension) are wrong",
    "tail_aligned": "the wrong tail starts at a multiple of the kernel's block size",
    "head": "only the first columns are wrong",
    "whole_rows": "wrong rows are wrong everywhere",
    "rows_from": "every row from some row on is wrong (a grid too small along rows)",
    "whole_columns": "wrong columns are wrong in every row",
    "periodic": "the mismatch map repeats with a period",
    "period_matches_block": "the period equals a block size of the kernel",
    "prefix_correct": "the first elements in memory order are right, the rest wrong",
    "single_element": "exactly one element is wrong",
    "scalar_output": "the wrong output has a single element (a full reduction: a loss, a norm, a total)",
    "all_wrong": "nearly every element is wrong",
    "nan_output": "every wrong element is NaN (often: never written)",
    "scaled": "output ≈ c × reference for a constant c",
    "scale": "the constant c of `scaled`",
    "scale_is_size_ratio": "c is close to a ratio of sizes and block sizes (n/BLOCK, n/(n-1)...), counting the case's sizes and the powers of two they round up to",
    "offset": "output ≈ reference + d for a constant d",
    "shifted": "output ≈ reference shifted by one along an axis",
    "transposed": "output ≈ the reference transposed",
    "permuted": "the right values in the wrong places",
    "error_column_correlation": "correlation between the error and the position along the last dimension",
    "error_ratio": "mean absolute error of the wrong elements over the mean magnitude of the reference",
    "small_error": "most elements (30% or more) are wrong, each only slightly (error_ratio below 2%, no NaN or inf): rounding or a coefficient, not logic",
    # probes
    "nondeterministic": "two identical runs gave different outputs (races, missing atomics)",
    "oob_loads": "loads outside every tensor of the launch (bounds checker)",
    "oob_stores": "stores outside every tensor of the launch (bounds checker)",
    "sweep_fails_off_block": "in the size sweep, sizes that are not multiples of the block fail while multiples pass",
    "sweep_fails_above_block": "in the size sweep, sizes above the block fail while sizes up to it pass",
    "sweep_fails_at_one": "in the size sweep, a size of 1 fails",
    "sweep_all_fail": "in the size sweep, every size fails (the bug does not depend on sizes or block alignment)",
    "sweep_all_pass": "in the size sweep, every size passes (the bug needs larger sizes or special values)",
    "structured_fail": "a structured-input probe (ones, zeros, arange, one-hot) fails",
    "ones_fail": "the all-ones probe fails",
    "zeros_fail": "the all-zeros probe fails",
    "large_values_fail": "inputs scaled up (large magnitudes) fail while the normal ones pass",
    "square_right": "the visible case fails, but the same kernel is right when its sizes are made equal (a stride or broadcast of the wrong dimension)",
    "symmetric_right": "wrong on square random inputs, right on square symmetric ones (x == x.T): an operand read transposed (strides swapped)",
}
