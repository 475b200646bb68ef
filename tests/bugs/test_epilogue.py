"""Epilogue steps on the wrong operand or in the wrong order, and a layer's bias never added: the edits the
reference-guided operators offer on small real Triton kernels, none on honest ones, and the repair search
reaching the fix through the real evaluator (tiny shapes)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from conftest import FIXTURES

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.bugs.reference import layers, steps
from kope.cases.task import build_cases, load_task
from kope.evaluate import Evaluator
from kope.repair.search import SearchConfig

EPILOGUE = FIXTURES / "epilogue"
OPERATORS = ["layer-bias", "scale-scope", "epilogue-order"]


def program(candidate: str, task: str) -> Program:
    parsed = Program.parse((EPILOGUE / candidate).read_text(), (EPILOGUE / task).read_text())
    assert parsed is not None
    return parsed


def test_the_reference_layers_and_steps_are_read_from_its_source() -> None:
    task = (EPILOGUE / "linear_scale_task.py").read_text()
    (gemm,) = layers(task)
    assert (gemm.attribute, gemm.kind, gemm.bias, gemm.out) == ("gemm", "linear", True, "out_features")
    assert steps(task) == ["shift", "scale", "act"]
    unbiased = task.replace("nn.Linear(in_features, out_features)", "nn.Linear(in_features, out_features, bias=False)")
    assert [layer.bias for layer in layers(unbiased)] == [False]


def test_a_scale_applied_to_the_bias_alone_is_moved_to_the_sum() -> None:
    made = edits(program("linear_scale_bias_scoped.py", "linear_scale_task.py"), OPERATORS)
    assert [e.operator for e in made] == ["scale-scope"]
    assert "acc = (acc + bias[None, :]) * scale" in made[0].source
    assert made[0].cue


def test_honest_kernels_and_kernels_without_a_reference_get_no_such_edit() -> None:
    assert edits(program("linear_scale_good.py", "linear_scale_task.py"), OPERATORS) == []
    bare = Program.parse((EPILOGUE / "linear_scale_bias_scoped.py").read_text(), "")
    assert bare is not None and edits(bare, OPERATORS) == []
    bare = Program.parse((EPILOGUE / "linear_gelu_no_bias.py").read_text(), "")
    assert bare is not None and edits(bare, OPERATORS) == []


def test_a_missing_layer_bias_is_made_passed_down_and_added_after_the_product_loop() -> None:
    made = edits(program("linear_gelu_no_bias.py", "linear_gelu_task.py"), OPERATORS)
    assert [e.operator for e in made] == ["layer-bias", "layer-bias"]
    first = made[0].source
    assert made[0].cue and not made[1].cue
    assert "self.linear_bias = nn.Parameter(torch.zeros(out_features))" in first
    assert "def gemm_gelu(x, weight, linear_bias=None):" in first
    assert "return gemm_gelu(x, self.weight, linear_bias=self.linear_bias)" in first
    assert "_gemm_gelu[grid](\n        linear_bias, x, w, out," in first
    assert "    linear_bias_ptr, x_ptr, w_ptr, out_ptr," in first
    assert "    acc += tl.load(linear_bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]\n" in first


RANK_ONE = """    for k in range(0, K):
        a = tl.load(x_ptr + offs_m * sxm + k * sxk, mask=offs_m < M, other=0.0)
        w = tl.load(w_ptr + k * swk + offs_n * swn, mask=offs_n < N, other=0.0)
        acc += a[:, None] * w[None, :]
"""


def test_a_product_accumulated_one_rank_one_update_at_a_time_gets_the_bias_after_its_loop_too() -> None:
    """A convolution or a matrix product written by hand (`acc += x[:, None] * w[None, :]` in nested loops) is as
    complete after its loop as a `tl.dot` one."""
    source = (EPILOGUE / "linear_gelu_no_bias.py").read_text()
    start, end = source.index("    for k in range(0, K, BLOCK_K):"), source.index("    y = 0.5 * acc")
    by_hand = source[:start] + RANK_ONE + source[end:]
    parsed = Program.parse(by_hand, (EPILOGUE / "linear_gelu_task.py").read_text())
    assert parsed is not None
    made = edits(parsed, ["layer-bias"])
    assert made and made[0].cue
    added = "    acc += tl.load(linear_bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]\n    y = 0.5 * acc"
    assert added in made[0].source
    elementwise = by_hand.replace("acc += a[:, None] * w[None, :]", "acc += a[:, None] + w[None, :]")
    parsed = Program.parse(elementwise, (EPILOGUE / "linear_gelu_task.py").read_text())
    assert parsed is not None and edits(parsed, ["layer-bias"]) == []  # a sum of two vectors is no product


def test_a_store_index_built_after_the_product_loop_is_written_out_where_the_bias_is_added() -> None:
    source = (EPILOGUE / "linear_gelu_no_bias.py").read_text()
    later = source.replace(
        "        out_ptr + offs_m[:, None] * som + offs_n[None, :] * son,",
        "        out_ptr + offs_m[:, None] * som + cols[None, :] * son,",
    ).replace(
        "mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),\n    )",
        "mask=(offs_m[:, None] < M) & (cols[None, :] < N),\n    )",
    )
    later = later.replace("    tl.store(\n", "    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    tl.store(\n", 1)
    assert later.count("cols") == 3, "the store's column index is made after the loop"
    parsed = Program.parse(later, (EPILOGUE / "linear_gelu_task.py").read_text())
    assert parsed is not None
    first = edits(parsed, OPERATORS)[0].source
    written = "(pid_n * BLOCK_N + tl.arange(0, BLOCK_N))"
    assert f"acc += tl.load(linear_bias_ptr + {written}, mask={written} < N, other=0.0)[None, :]" in first


ORDER_KERNEL = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def _k(x_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        acc = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc += tl.load(b_ptr + offs, mask=offs < n, other=0.0)
        acc = acc - 0.5
        acc = tl.maximum(acc, 0.0)
        tl.store(out_ptr + offs, acc, mask=offs < n)
    """
)

ORDER_TASK = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)

        def forward(self, x):
            x = self.fc(x)
            x = torch.relu(x)
            return x - 0.5
    """
)


def test_two_updates_in_the_other_order_than_the_reference_are_exchanged() -> None:
    parsed = Program.parse(ORDER_KERNEL, ORDER_TASK)
    assert parsed is not None
    made = edits(parsed, ["epilogue-order"])
    assert len(made) == 1 and made[0].cue
    assert "acc = tl.maximum(acc, 0.0)\n    acc = acc - 0.5\n" in made[0].source
    right = Program.parse(made[0].source, ORDER_TASK)
    assert right is not None and edits(right, ["epilogue-order"]) == []


def repair(evaluator: Evaluator, tmp_path: Path, task: str, candidate: str) -> tuple[str, list[str]]:
    shutil.copy(EPILOGUE / task, tmp_path / "task.py")
    shutil.copy(EPILOGUE / candidate, tmp_path / "candidate.py")
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=12))
    report = DebugLoop(None, evaluator, config=config).run(
        tmp_path / "task.py", tmp_path / "candidate.py", tmp_path / "fixed.py"
    )
    assert report.status == "repaired", report.search
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    return (tmp_path / "fixed.py").read_text(), accepted


def test_the_search_moves_a_misplaced_scale_onto_the_sum(evaluator: Evaluator, tmp_path: Path) -> None:
    fixed, accepted = repair(evaluator, tmp_path, "linear_scale_task.py", "linear_scale_bias_scoped.py")
    assert accepted == ["scale-scope"]
    assert "acc = (acc + bias[None, :]) * scale" in fixed


def test_the_search_adds_a_layer_bias_the_kernel_never_had(evaluator: Evaluator, tmp_path: Path) -> None:
    fixed, accepted = repair(evaluator, tmp_path, "linear_gelu_task.py", "linear_gelu_no_bias.py")
    assert accepted == ["layer-bias"]
    assert "self.linear_bias = nn.Parameter" in fixed


def _two_branches() -> str:
    """The fixture's kernel and a copy of it for wide outputs, launched on the other branch of the host code (as
    real kernels keep a small-size and a large-size kernel): the task's cases all take the small one."""
    source = (EPILOGUE / "linear_gelu_no_bias.py").read_text()
    start, end = source.index("@triton.jit"), source.index("def gemm_gelu(")
    wide = source[start:end].replace("def _gemm_gelu(", "def _gemm_gelu_wide(")
    launch = source[source.index("    _gemm_gelu[grid](") : source.index("    return out")]
    branches = (
        "    if M * N > 4096:\n"
        + textwrap.indent(launch.replace("_gemm_gelu[grid]", "_gemm_gelu_wide[grid]"), "    ")
        + "    else:\n"
        + textwrap.indent(launch, "    ")
    )
    return source[:end] + wide + source[end:].replace(launch, branches)


def test_a_bias_missing_from_a_kernel_on_each_branch_is_added_to_both_first(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """Edits of one kernel each are right on every case that runs the other kernel's branch not at all: the edit
    that adds the bias to both comes first, and is the one right on a case that takes the wide branch."""
    parsed = Program.parse(_two_branches(), (EPILOGUE / "linear_gelu_task.py").read_text())
    assert parsed is not None
    made = edits(parsed, ["layer-bias"])
    assert [e.description.endswith("(and in each of the 2 kernels that compute it)") for e in made] == [
        True,
        *[False] * (len(made) - 1),
    ]
    both, one = made[0].source, made[1].source
    load = "    acc += tl.load(linear_bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]\n"
    assert both.count(load) == 2 and one.count(load) == 1
    assert both.count("linear_bias, x, w, out,") == 2 and both.count("self.linear_bias = nn.Parameter") == 1
    task = load_task(EPILOGUE / "linear_gelu_task.py")
    own = build_cases(task, [{"batch_size": 12, "in_features": 40, "out_features": 24}])
    wide = build_cases(task, [{"batch_size": 300, "in_features": 8, "out_features": 24}])
    for name, source, right_when_wide in (("both.py", both, True), ("one.py", one, False)):
        (tmp_path / name).write_text(source)
        assert evaluator.evaluate(task, tmp_path / name, cases=own).status == "pass", name
        assert (evaluator.evaluate(task, tmp_path / name, cases=wide).status == "pass") is right_when_wide, name
