from __future__ import annotations

import numpy as np
import pytest

from kope.cases.tolerance import Tolerance
from kope.evaluate.compare import StructureMismatch, check_structure, compare_outputs, summarize
from kope.protocol import ValueMeta


def tensor(key: str, array: np.ndarray, dtype: str | None = None) -> ValueMeta:
    return ValueMeta(type="tensor", key=key, dtype=dtype or str(array.dtype), shape=list(array.shape))


def run(reference: np.ndarray, candidate: np.ndarray, dtype: str = "float32"):
    native = tensor("t0", reference, dtype)
    ref_values = tensor("t0", reference, "float64")
    cand = tensor("t0", candidate, dtype)
    (diff,) = compare_outputs(native, ref_values, {"t0": reference}, cand, {"t0": candidate})
    return diff


def test_every_element_is_checked_within_tolerance() -> None:
    reference = np.linspace(-3, 3, 101)
    candidate = (reference + 5e-5).astype(np.float32)
    assert run(reference, candidate).mismatch_count == 0
    candidate[77] += 1e-2
    diff = run(reference, candidate)
    assert diff.mismatch_count == 1 and diff.first_mismatch == [77] and diff.worst_index == [77]
    assert diff.max_abs_err == pytest.approx(1e-2 + 5e-5, rel=1e-3)


def test_the_mean_error_moves_when_every_element_comes_closer_and_the_worst_does_not() -> None:
    """A clamp holds the worst element where it was; the mean error says the rest came closer."""
    reference = np.linspace(0.0, 1.0, 100)
    far = np.where(np.arange(100) == 0, 5.0, reference + 2.0).astype(np.float32)
    near = np.where(np.arange(100) == 0, 5.0, reference + 0.5).astype(np.float32)
    before, after = run(reference, far), run(reference, near)
    assert before.max_abs_err == after.max_abs_err and before.mismatch_count == after.mismatch_count == 100
    assert before.mean_abs_err == pytest.approx((5.0 + 99 * 2.0) / 100, rel=1e-5)
    assert after.mean_abs_err == pytest.approx((5.0 + 99 * 0.5) / 100, rel=1e-5)


def test_nan_and_inf_must_match_position_for_position() -> None:
    reference = np.array([1.0, np.nan, np.inf, -np.inf, 2.0])
    same = np.array([1.0, np.nan, np.inf, -np.inf, 2.0], dtype=np.float32)
    assert run(reference, same).mismatch_count == 0
    moved = np.array([np.nan, 1.0, -np.inf, np.inf, 2.0], dtype=np.float32)
    diff = run(reference, moved)
    assert diff.mismatch_count == 4 and diff.nan_mismatch == 4


def test_integers_compare_exactly() -> None:
    reference = np.array([[0, 3], [2, 1]], dtype=np.int64)
    candidate = np.array([[0, 3], [1, 1]], dtype=np.int64)
    diff = run(reference, candidate, "int64")
    assert diff.mismatch_count == 1 and diff.first_mismatch == [1, 0]


def test_dtype_and_shape_must_match() -> None:
    reference = np.zeros((2, 3))
    with pytest.raises(StructureMismatch, match="dtype float16"):
        compare_outputs(
            tensor("t0", reference, "float32"),
            tensor("t0", reference, "float64"),
            {"t0": reference},
            tensor("t0", reference.astype(np.float16)),
            {"t0": reference.astype(np.float16)},
        )
    with pytest.raises(StructureMismatch, match="shape"):
        check_structure(tensor("t0", reference, "float32"), tensor("t0", np.zeros((3, 2)), "float32"))


def test_tuple_outputs_and_scalars() -> None:
    a = np.ones(4)
    native = ValueMeta(type="tuple", items=[tensor("t0", a, "float32"), ValueMeta(type="float", value=2.0)])
    values = ValueMeta(type="tuple", items=[tensor("t0", a, "float64"), ValueMeta(type="float", value=2.0)])
    cand = ValueMeta(type="list", items=[tensor("t0", a.astype(np.float32)), ValueMeta(type="float", value=2.5)])
    diffs = compare_outputs(native, values, {"t0": a}, cand, {"t0": a.astype(np.float32)})
    assert [d.mismatch_count for d in diffs] == [0, 1]
    single = ValueMeta(type="tensor", key="t0", dtype="float32", shape=[4])
    with pytest.raises(StructureMismatch, match="a tuple of 2"):
        check_structure(native, single)


def test_custom_tolerance_and_summary() -> None:
    reference = np.zeros(10)
    candidate = np.full(10, 0.005, dtype=np.float16)
    native = tensor("t0", reference, "float16")
    strict = {"float16": Tolerance(atol=1e-3, rtol=0.0)}
    (loose,) = compare_outputs(
        native, tensor("t0", reference, "float64"), {"t0": reference}, tensor("t0", candidate), {"t0": candidate}
    )
    (tight,) = compare_outputs(
        native,
        tensor("t0", reference, "float64"),
        {"t0": reference},
        tensor("t0", candidate),
        {"t0": candidate},
        strict,
    )
    assert loose.mismatch_count == 0 and tight.mismatch_count == 10
    summary = summarize([[loose], [tight]])
    assert summary["mismatch_count"] == 10 and summary["numel"] == 20 and summary["mismatch_fraction"] == 0.5
    assert summary["outputs"] == [tight] and not summary["passed"]


def test_malformed_data_is_an_error_not_a_pass() -> None:
    reference = np.zeros(3)
    meta = tensor("t0", reference, "float32")
    with pytest.raises(ValueError, match="missing"):
        compare_outputs(meta, tensor("t0", reference, "float64"), {"t0": reference}, meta, {})
    lying = ValueMeta(type="tensor", key="t0", dtype="float32", shape=[3])
    with pytest.raises(ValueError, match="declared shape"):
        compare_outputs(
            meta, tensor("t0", reference, "float64"), {"t0": reference}, lying, {"t0": np.zeros(4, dtype=np.float32)}
        )


@pytest.mark.parametrize(
    ("reference", "candidate", "fix"),
    [
        (np.array(3.5), np.array([3.5], dtype=np.float32), ".reshape(())"),
        (np.arange(6.0), np.arange(6.0, dtype=np.float32).reshape(1, 6, 1), ".squeeze()"),
        (np.ones((2, 1, 3)), np.ones((2, 1, 3, 1), dtype=np.float32), ".squeeze(-1)"),
        (np.ones((1, 4)), np.ones(4, dtype=np.float32), ".unsqueeze(0)"),
        (np.arange(6.0).reshape(2, 3), np.arange(6.0, dtype=np.float32).reshape(2, 3).T.copy(), ".transpose(-2, -1)"),
        (np.arange(6.0).reshape(2, 3), np.arange(6.0, dtype=np.float32).reshape(3, 2), ".reshape(2, 3)"),
    ],
)
def test_values_right_up_to_a_shape_change_fail_with_the_fix(
    reference: np.ndarray, candidate: np.ndarray, fix: str
) -> None:
    native = tensor("t0", reference, "float32")
    (diff,) = compare_outputs(native, tensor("t0", reference, "float64"), {"t0": reference},
                              tensor("t0", candidate), {"t0": candidate})  # fmt: skip
    assert diff.shape_fix == fix and diff.mismatch_count == diff.numel == reference.size
    assert diff.max_abs_err == 0.0 and diff.candidate_shape == list(candidate.shape)
    summary = summarize([[diff]])
    assert not summary["passed"] and summary["shape_fix"] == fix and fix in summary["notes"][0]


def test_a_square_output_right_only_transposed_is_named() -> None:
    reference = np.arange(9.0).reshape(3, 3)
    diff = run(reference, reference.T.astype(np.float32))
    assert diff.mismatch_count == 6 and diff.shape_fix == ".transpose(-2, -1)"


def test_wrong_values_of_another_shape_stay_a_shape_error() -> None:
    reference = np.array(3.5)
    candidate = np.array([4.5], dtype=np.float32)
    with pytest.raises(StructureMismatch, match="shape"):
        compare_outputs(tensor("t0", reference, "float32"), tensor("t0", reference, "float64"), {"t0": reference},
                        tensor("t0", candidate), {"t0": candidate})  # fmt: skip


def test_other_profiles_are_counted_in_the_same_pass() -> None:
    from kope.cases.tolerance import PROFILES

    reference = np.linspace(1.0, 2.0, 50)
    candidate = (reference * (1 + 2e-3)).astype(np.float32)
    native = tensor("t0", reference, "float32")
    (diff,) = compare_outputs(native, tensor("t0", reference, "float64"), {"t0": reference},
                              tensor("t0", candidate), {"t0": candidate}, PROFILES["strict"],
                              {"kernelbench": PROFILES["kernelbench"]})  # fmt: skip
    assert diff.mismatch_count == 50 and diff.mismatches_under == {"kernelbench": 0}
    assert "mismatches_under" not in diff.model_dump()


def test_an_output_holding_one_value_where_the_reference_varies_is_named() -> None:
    """A zeroed output is right wherever a ReLU is zero: the comparison says it holds one value, so that a search
    does not take its half-right elements for progress. A constant reference, or a right output, is not flagged."""
    reference = np.maximum(np.linspace(-1.0, 1.0, 64), 0.0)
    zeros = np.zeros(64, dtype=np.float32)
    diff = run(reference, zeros)
    assert diff.mismatch_count == 32 and diff.constant == 0.0 and diff.max_rel_err == pytest.approx(1.0)
    notes = summarize([[diff]])["notes"]
    assert len(notes) == 1 and "every element is 0 where the reference's values vary" in notes[0]
    assert run(np.zeros(64), np.full(64, 2.0, dtype=np.float32)).constant is None  # the reference is one value too
    assert run(reference, reference.astype(np.float32)).constant is None  # right: nothing to say
    assert run(reference, np.full(64, 0.5, dtype=np.float32)).constant == 0.5
    almost = zeros.copy()
    almost[-1] = 3.0
    assert run(reference, almost).constant is None  # one element that varies: it reads something
