"""What an evaluation says beyond pass and fail: the tolerance profile and where the profiles disagree, wrong
values that also trip a gate, shape-only differences, platform limits. Real tasks, real Triton kernels."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.judging import BF16_DOT, TF32_DOT, limits, random_reference
from kope.protocol.results import CaseResult, EvalResult, OutputDiff
from kope.render import tolerance_line

JUDGE = FIXTURES / "judge"
TASKS = JUDGE / "tasks"
KERNELS = JUDGE / "candidates"
OPTIONS = EvalOptions(trials=2, timeout_s=60, memory_mb=2048)


def test_a_reduction_off_by_1e_3_fails_strict_passes_kernelbench_and_says_so(evaluator: Evaluator) -> None:
    strict = evaluator.evaluate(TASKS / "row_sum.py", KERNELS / "row_sum_bf16.py", options=OPTIONS)
    assert strict.status == "fail" and strict.tolerance_profile == "strict"
    disagreement = strict.profile_disagreement
    assert disagreement is not None
    assert (disagreement.strict, disagreement.kernelbench) == ("fail", "pass")
    assert 1e-4 < disagreement.max_rel_err < 1e-2 and disagreement.max_abs_err > 1e-3
    assert disagreement.cases == [c.name for c in strict.cases]
    assert all(c.passed_under == {"strict": False, "kernelbench": True} for c in strict.cases)
    data = json.loads(strict.model_dump_json())
    assert data["tolerance_profile"] == "strict"
    assert data["profile_disagreement"]["kernelbench"] == "pass"

    loose = evaluator.evaluate(
        TASKS / "row_sum.py", KERNELS / "row_sum_bf16.py", options=EvalOptions(trials=2, tolerance="kernelbench")
    )
    assert loose.status == "pass" and loose.tolerance_profile == "kernelbench"
    assert loose.profile_disagreement is not None and loose.profile_disagreement.strict == "fail"
    assert all(o.atol == pytest.approx(1e-2) for c in loose.cases for o in c.outputs)


def test_auto_judges_a_kernelbench_problem_file_by_the_benchmark(evaluator: Evaluator, tmp_path: Path) -> None:
    task = tmp_path / "KernelBench" / "level1" / "9_RowSum.py"
    task.parent.mkdir(parents=True)
    shutil.copy(JUDGE / "kernelbench" / "level1" / "9_RowSum.py", task)
    result = evaluator.evaluate(task, KERNELS / "row_sum_bf16.py", options=EvalOptions(trials=1))
    assert result.tolerance_profile == "kernelbench" and "KernelBench" in (result.tolerance_reason or "")
    assert result.status == "pass"
    assert result.profile_disagreement is not None and result.profile_disagreement.strict == "fail"


def test_wrong_values_that_also_trip_a_gate_fail_with_the_findings_kept(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(TASKS / "relu_scale.py", KERNELS / "relu_torch_wrong_scale.py", options=OPTIONS)
    assert result.status == "fail" and result.exit_code == 1
    assert result.integrity.verdict == "reject"
    assert "torch-compute" in {f.rule for f in result.integrity.findings if f.severity == "reject"}


def test_right_values_from_pytorch_are_still_rejected(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(TASKS / "relu_scale.py", KERNELS / "relu_torch_right_scale.py", options=OPTIONS)
    assert all(c.passed for c in result.cases)
    assert result.status == "reject" and result.integrity.verdict == "reject"


def test_dtype_and_shape_questions_to_pytorch_on_the_inputs_are_not_pytorch_doing_the_task(
    evaluator: Evaluator,
) -> None:
    result = evaluator.evaluate(TASKS / "relu_scale.py", KERNELS / "relu_scale_result_type.py", options=OPTIONS)
    assert result.status == "pass", [f.message for f in result.integrity.findings]
    assert result.integrity.verdict == "clean"


def test_a_scalar_returned_as_one_element_fails_with_its_shape_fix(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(TASKS / "total_sum.py", KERNELS / "total_sum_one_element.py", options=OPTIONS)
    assert result.status == "fail" and result.error is None
    for case in result.cases:
        assert not case.passed and case.shape_fix == ".reshape(())"
        assert case.max_abs_err is not None and case.max_abs_err < 1e-4
        assert case.outputs[0].candidate_shape == [1] and case.outputs[0].shape == []
        assert any("(1,)" in note and ".reshape(())" in note for note in case.notes)


def test_bf16_dot_in_the_interpreter_is_reported_as_a_limit(evaluator: Evaluator) -> None:
    result = evaluator.evaluate(TASKS / "matmul_bf16.py", KERNELS / "matmul_bf16_dot.py", options=OPTIONS)
    assert result.status == "fail" and result.limits == [BF16_DOT]
    assert result.cases[0].max_abs_err is not None and result.cases[0].max_abs_err > 1.0


def test_tf32_is_a_limit_only_for_a_default_precision_dot_on_a_gpu_within_the_benchmark_tolerance() -> None:
    diff = OutputDiff(index=0, shape=[4, 4], dtype="float32", numel=16, mismatch_count=3, max_abs_err=2e-3,
                      max_rel_err=1e-3, atol=1e-4, rtol=1e-4)  # fmt: skip
    case = CaseResult(name="c", overrides={}, visible=True, passed=False, outputs=[diff],
                      passed_under={"strict": False, "kernelbench": True})  # fmt: skip
    on_gpu = EvalResult(status="fail", cases=[case], cases_run="all", task="t", candidate="c", device="cuda", seed=0)
    source = (KERNELS / "matmul_bf16_dot.py").read_text()
    assert limits(on_gpu, source) == [TF32_DOT]
    ieee = source.replace("tl.dot(a, b)", "tl.dot(a, b, input_precision='ieee')")
    assert limits(on_gpu, ieee) == []
    assert limits(on_gpu, source.replace("tl.dot(a, b)", "tl.dot(a, b, allow_tf32=False)")) == []
    far = case.model_copy(update={"passed_under": {"strict": False, "kernelbench": False}})
    assert limits(on_gpu.model_copy(update={"cases": [far]}), source) == []
    on_cpu = on_gpu.model_copy(update={"device": "cpu"})
    assert limits(on_cpu, source.replace("bfloat16", "float32")) == []


def test_module_mode_eval_runs_both_models_as_inference_and_says_so(evaluator: Evaluator) -> None:
    """BatchNorm on running statistics and Dropout off: the kernel is right in eval mode, wrong in train mode
    (PyTorch's default, KernelBench's harness); the mode is part of the verdict and of the reference's key."""
    task, kernel = TASKS / "batchnorm_dropout.py", KERNELS / "batchnorm_inference.py"
    trained = evaluator.evaluate(task, kernel, options=OPTIONS)
    assert trained.status == "fail" and trained.module_mode == "train"
    inference = evaluator.evaluate(task, kernel, options=dataclasses.replace(OPTIONS, module_mode="eval"))
    assert inference.status == "pass", [c.error for c in inference.cases]
    assert inference.module_mode == "eval" and json.loads(inference.model_dump_json())["module_mode"] == "eval"
    assert "eval mode" in tolerance_line(inference) and "eval mode" not in tolerance_line(trained)
    # in train mode the reference's Dropout draws: two runs on one input differ, which no kernel can match
    assert trained.limits == [random_reference("dropout")] and inference.limits == []


def test_a_reference_that_draws_without_its_values_depending_on_it_is_no_limit(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """A forward that calls `torch.rand_like` and throws the draw away is judged by its values as ever: only a
    reference whose two runs differ is random."""
    task = tmp_path / "relu_draw.py"
    task.write_text(
        (TASKS / "relu_scale.py")
        .read_text()
        .replace("        return torch.relu(x) * 2.0", "        torch.rand_like(x)\n        return torch.relu(x) * 2.0")
    )
    result = evaluator.evaluate(task, KERNELS / "relu_torch_wrong_scale.py", options=OPTIONS)
    assert result.status == "fail" and result.limits == []
