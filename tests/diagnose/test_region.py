"""The value region a wrong output is wrong in, by the reference's value (`OutputSignature.region`)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from kope.diagnose.signature import signature


def x() -> torch.Tensor:
    return torch.linspace(-6.0, 6.0, 4001, dtype=torch.float64).reshape(1, -1)


def test_an_elu_wrong_in_its_negative_branch_is_wrong_where_the_reference_is_negative() -> None:
    ref = F.elu(x()).numpy()
    candidate = torch.where(x() > 0, x(), x() + 1.0).numpy()
    sig = signature(ref, candidate, atol=1e-5, rtol=1e-5)
    assert sig.region == "reference < 0"


def test_a_softplus_without_its_threshold_is_wrong_where_the_reference_is_large() -> None:
    big = x() * 20.0
    ref = F.softplus(big, beta=1.0, threshold=20.0).numpy()
    candidate = np.where(big.numpy() > 100.0, 0.0, ref)
    assert signature(ref, candidate, atol=1e-5, rtol=1e-5).region == "|reference| large"


def test_a_formula_wrong_everywhere_or_nowhere_has_no_region() -> None:
    ref = torch.sigmoid(x()).numpy()
    assert signature(ref, ref * 1.5, atol=1e-5, rtol=1e-5).region is None
    assert signature(ref, ref, atol=1e-5, rtol=1e-5).region is None
