"""The extraction of the features the knowledge base's symptoms rely on, and the JSON they print as."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from kope.cases.task import Case
from kope.diagnose.diagnoser import Diagnoser
from kope.diagnose.extract import _signature_features
from kope.diagnose.report import Diagnosis
from kope.diagnose.signature import signature
from kope.evaluate import EvalOptions, Evaluator
from kope.knowledge.features import FEATURES
from kope.ops import get_op

RNG = np.random.default_rng(1)
NEAR_MISS = Path(__file__).parents[2] / "src" / "kope" / "corpora" / "fixtures"


def features(reference: np.ndarray, candidate: np.ndarray, sizes: tuple[int, ...] = (), blocks: set[int] | None = None):
    sig = signature(reference, candidate, 1e-4, 1e-4, blocks or set())
    found = _signature_features(sig, blocks or set(), sizes)
    assert set(found) <= set(FEATURES)
    return found


def test_half_precision_rounding_is_a_small_widespread_error() -> None:
    reference = 100 * RNG.standard_normal((16, 300))  # sums and scans reach magnitudes like these
    rounded = reference.astype(np.float16).astype(np.float64)
    found = features(reference, rounded)
    assert found["small_error"] and found["error_ratio"] < 1e-3


def test_a_logic_error_is_not_small() -> None:
    reference = RNG.standard_normal((16, 300))
    found = features(reference, reference[::-1].copy())
    assert not found["small_error"]


def test_a_few_wrong_elements_are_not_a_widespread_error() -> None:
    reference = RNG.standard_normal((16, 300))
    candidate = reference.copy()
    candidate[0, :3] += 1e-3
    assert not features(reference, candidate)["small_error"]


def test_scale_from_a_reduced_dimension_is_a_size_ratio() -> None:
    """A row mean divided by the block (1024) instead of n (1000): n is not in the output's shape."""
    reference = RNG.standard_normal(64)
    found = features(reference, reference * (1000 / 1024), sizes=(64, 1000), blocks={4096})
    assert found["scaled"] and found["scale_is_size_ratio"]
    assert not features(reference, reference * 0.9137, sizes=(64, 1000), blocks={4096}).get("scale_is_size_ratio")


def test_scalar_output() -> None:
    assert features(np.array(2.0), np.array(1.5))["scalar_output"]
    assert not features(np.ones(4), np.zeros(4))["scalar_output"]


def test_tiny_outputs_with_unwritten_blocks_are_not_called_shifted() -> None:
    """Softmax rows of 4097 values (each ~2e-4, within 10 atol of anything): an unwritten first
    block must not make the identity-like output look shifted or transposed."""
    reference = np.abs(RNG.standard_normal((7, 4097))) / 4097
    candidate = reference.copy()
    candidate[:, :4096] = np.nan
    sig = signature(reference, candidate, 1e-4, 1e-4, {4096})
    assert "shifted" not in sig.structure and not sig.transposed
    assert "nan" in sig.structure


GOLDEN = Path(__file__).parents[1] / "fixtures" / "diagnose" / "row_mean_divide_by_block.json"
"""`kope diagnose --json` of this diagnosis as the code before `Features` wrote it (main at 0d0e00d),
less what varies from run to run (seconds, paths, the evaluation's record)."""


def _rounded(value: Any) -> Any:
    """Floats to 12 significant digits: the last bit of a dot product differs between NumPy builds and BLAS threads."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_the_diagnosis_json_is_unchanged_by_the_typed_features(evaluator: Evaluator, fast: EvalOptions) -> None:
    op = get_op("row_mean")
    cases = [
        Case(name="visible", overrides={"batch_size": 4, "dim": 40}, visible=True),
        Case(name="aligned", overrides={"batch_size": 3, "dim": 64}, visible=False),
    ]
    candidate = NEAR_MISS / "row_mean_divide_by_block.py"
    diagnosis = Diagnoser(evaluator).diagnose(op.task_path, candidate, options=fast, cases=cases, probes=False)
    printed = _rounded(json.loads(diagnosis.model_dump_json()))
    golden = _rounded(json.loads(GOLDEN.read_text()))
    assert sorted(printed) == golden.pop("keys")
    assert {key: printed[key] for key in golden} == golden
    assert list(printed["signature"]) == list(golden["signature"]), "the features keep their order"
    assert diagnosis.features.scaled and diagnosis.features.nondeterministic is None
    again = Diagnosis.model_validate_json(diagnosis.model_dump_json())
    assert again.features == diagnosis.features and again.cues == diagnosis.cues


def test_a_version_wrong_only_on_a_larger_case_points_at_the_size_dependent_bugs(
    evaluator: Evaluator, fast: EvalOptions, tmp_path: Path
) -> None:
    """The ReLU whose grid is capped at 512 programs of 1024 lanes: right at 300,000 elements and 1,000, wrong at
    600,000 (past the cap). Only the larger case fails, with wrong values: the bugs that need sizes past a
    threshold (a loop or grid too short, a capped block) rank first. A value bug (`tl.abs` for ReLU) is wrong at
    every size: there the feature does not hold."""
    from conftest import FIXTURES

    task = FIXTURES / "capped" / "relu_million_task.py"
    cases = [
        Case(name="visible", overrides={"n": 300_000}, visible=True),
        Case(name="small", overrides={"n": 1_000}, visible=False),
        Case(name="larger", overrides={"n": 600_000}, visible=False),
    ]
    capped = FIXTURES / "capped" / "relu_capped.py"
    diagnosis = Diagnoser(evaluator).diagnose(task, capped, options=fast, cases=cases, probes=False)
    assert [c.passed for c in diagnosis.cases] == [True, True, False]
    assert diagnosis.features.fails_only_larger
    assert diagnosis.hypotheses[0].pattern in ("loop-bound", "grid-too-small"), diagnosis.hypotheses
    absolute = tmp_path / "relu_abs.py"
    absolute.write_text(capped.read_text().replace("tl.maximum(x, 0.0)", "tl.abs(x)"))
    wrong = Diagnoser(evaluator).diagnose(task, absolute, options=fast, cases=cases, probes=False)
    assert not any(c.passed for c in wrong.cases) and not wrong.features.fails_only_larger
