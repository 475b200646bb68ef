"""Mismatch signatures on synthetic outputs with known bugs."""

from __future__ import annotations

import numpy as np

from kope.diagnose.signature import signature

RNG = np.random.default_rng(0)
REF = RNG.standard_normal((8, 1000))


def sig(candidate: np.ndarray, blocks: tuple[int, ...] = (256,)):
    return signature(REF, candidate, 1e-4, 1e-4, blocks)


def test_correct_output_has_no_structure() -> None:
    result = sig(REF.astype(np.float32))
    assert result.mismatch_count == 0 and result.structure == []


def test_unwritten_tail() -> None:
    candidate = REF.copy()
    candidate[:, 768:] = np.nan
    result = sig(candidate)
    assert {"tail", "nan", "whole-columns"} <= set(result.structure)
    assert result.tail_start == 768 and result.nan_count == 8 * 232 and result.first_mismatch == [0, 768]


def test_rows_from_and_prefix() -> None:
    candidate = REF.copy()
    candidate[5:] = 0.0
    result = sig(candidate)
    assert {"rows-from", "whole-rows", "prefix-correct"} <= set(result.structure)
    assert result.rows_from == 5 and result.prefix == 5000


def test_scaled_offset_shifted_transposed() -> None:
    scaled = sig(REF * (1000 / 1024))
    assert "scaled" in scaled.structure and abs(scaled.scale - 1000 / 1024) < 1e-9
    assert "offset" in sig(REF + 0.5).structure
    shifted = sig(np.roll(REF, 1, axis=1))
    assert shifted.shift is not None and shifted.shift.amount == 1 and shifted.shift.axis == -1
    square = RNG.standard_normal((64, 64))
    assert signature(square, square.T.copy(), 1e-4, 1e-4).transposed


def test_periodic_and_single_element() -> None:
    candidate = REF.copy()
    candidate[:, ::256] += 1.0
    periodic = sig(candidate)
    assert "periodic" in periodic.structure and periodic.period == 256
    one = REF.copy()
    one[3, 7] += 1.0
    single = sig(one)
    assert "single-element" in single.structure and single.first_mismatch == [3, 7]


def test_permuted_values() -> None:
    flat = REF.reshape(-1).copy()
    candidate = flat[RNG.permutation(flat.size)].reshape(REF.shape)
    assert sig(candidate).permuted
