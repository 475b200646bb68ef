"""The features model: only measured features are printed, unknown ones are refused."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from kope.knowledge.features import FEATURES, Features


def test_only_measured_features_are_printed_and_unknown_ones_are_refused() -> None:
    features = Features(status="fail", error_kind=None, tail=True)
    assert features.measured() == {"status": "fail", "error_kind": None, "tail": True}
    assert json.loads(features.model_dump_json()) == features.measured()
    assert features.head is None and FEATURES["tail"] == "only the last columns (last dimension) are wrong"
    with pytest.raises(ValidationError):
        Features.model_validate({"no_such_feature": True})
