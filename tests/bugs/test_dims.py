"""The dims kind: transposed operands passed as stored, and sizes taken from the wrong dimension (bugs real models
make in matrix products), proposed by the operators and repaired offline through the real evaluator (small shapes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, offline_repair

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.dims import launch_strides, origin, transposed_inputs
from kope.bugs.edit import Program, edits
from kope.bugs.mutation import mutants
from kope.diagnose.report import Diagnosis
from kope.evaluate import Evaluator
from kope.knowledge.retrieval import Hypothesis
from kope.repair.search import RepairSearch, SearchConfig

DIMS = FIXTURES / "dims"
TT_TASK = (DIMS / "matmul_tt_task.py").read_text()
AS_STORED = (DIMS / "matmul_tt_as_stored.py").read_text()
MATMUL_TASK = (DIMS / "matmul_task.py").read_text()
MATMUL = (DIMS / "matmul.py").read_text()
NORM_TASK = (DIMS / "conv_layernorm_task.py").read_text()
NORM_CHANNELS = (DIMS / "conv_layernorm_channels.py").read_text()
SWAPPED_CALL = "norm_relu(self.conv(x).transpose(1, -1).contiguous(), self.norm).transpose(1, -1).contiguous()"

STORED = "a.stride(0), a.stride(1),\n        b.stride(0), b.stride(1),"
TRANSPOSED = "a.stride(1), a.stride(0),\n        b.stride(1), b.stride(0),"
HONEST = AS_STORED.replace(STORED, TRANSPOSED)


def parsed(source: str, reference: str) -> Program:
    program = Program.parse(source, reference)
    assert program is not None
    return program


def test_the_reference_transposes_inputs_by_position_and_module_attributes() -> None:
    assert transposed_inputs(TT_TASK) == {"0", "1"}
    assert transposed_inputs(MATMUL_TASK) == set()
    weight = "class Model:\n    def forward(self, x, y):\n        return x @ self.weight.t() + y.transpose(0, 1)\n"
    assert transposed_inputs(weight) == {"self.weight", "1"}
    assert transposed_inputs("torch.transpose(") == set()


def test_a_host_tensor_is_traced_to_the_forward_input_it_is_and_whether_the_host_transposed_it() -> None:
    program = parsed(AS_STORED, TT_TASK)
    launch = program.parsed.launches[0]
    tensors = {tensor: arg for arg, tensor, _ in launch_strides(program, launch.call)}
    assert list(tensors) == ["a", "b", "c"]
    host = launch.host
    assert origin(program, host, tensors["a"].func.value) == ("0", False)  # type: ignore[attr-defined]
    assert origin(program, host, tensors["b"].func.value) == ("1", False)  # type: ignore[attr-defined]
    assert origin(program, host, tensors["c"].func.value) == ("", False)  # type: ignore[attr-defined]
    flipped = parsed(AS_STORED.replace("matmul_tt(A.contiguous(), B.contiguous())", "matmul_tt(A.t(), B)"), TT_TASK)
    site = flipped.parsed.launches[0]
    a = next(arg for arg, tensor, _ in launch_strides(flipped, site.call) if tensor == "a")
    assert origin(flipped, site.host, a.func.value) == ("0", True)  # type: ignore[attr-defined]


def test_transposed_operands_swaps_every_subset_of_stride_pairs_and_cues_the_one_the_reference_transposes() -> None:
    made = edits(parsed(AS_STORED, TT_TASK), ["transposed-operands"])
    assert len(made) == 7  # a, b, c: every non-empty subset
    cued = [e for e in made if e.cue]
    assert len(cued) == 1 and cued[0].source == HONEST
    assert cued[0].label == "wrong-stride" and "`a`, `b`" in cued[0].description
    # one pair alone is `stride-argument`'s swap too: the search evaluates it once
    everything = edits(parsed(AS_STORED, TT_TASK))
    assert sum(e.source == HONEST for e in everything) == 1


def test_the_cue_read_off_the_reference_is_tried_before_the_first_hypothesis_recipes(evaluator: Evaluator) -> None:
    """The dev kernel this was tuned on crashed out of bounds: the diagnosis ranked precision and grid hypotheses
    first, and every edit that stopped the crash was kept and expanded before any stride edit was tried."""
    hypotheses = [Hypothesis(pattern=p, score=10.0 - i) for i, p in enumerate(["precision-loss", "grid-too-small"])]
    diagnosis = Diagnosis(status="error", task="t", candidate="c", hypotheses=hypotheses)
    first = RepairSearch(evaluator).candidates(AS_STORED, diagnosis, TT_TASK)[0]
    assert (first.operator, first.source) == ("transposed-operands", HONEST)
    assert "scale indices bounded by the other dimension's size" in first.why


def test_an_honest_kernel_gets_no_cued_transposed_operands_edit() -> None:
    """Strides passed in the transposed order, or tensors the host transposed first, or a product that transposes
    nothing: no cue (the edits are still there, tried in turn)."""
    host_transposed = (
        AS_STORED.replace("matmul_tt(A.contiguous(), B.contiguous())", "matmul_tt(A.T, B.T)")
        .replace("k, m = a.shape", "m, k = a.shape")
        .replace("n = b.shape[0]", "n = b.shape[1]")
    )
    for source, task in ((HONEST, TT_TASK), (host_transposed, TT_TASK), (MATMUL, MATMUL_TASK)):
        made = edits(parsed(source, task), ["transposed-operands"])
        assert made and not any(e.cue for e in made)


def test_the_reference_grounds_the_cue_where_the_sizes_say_nothing() -> None:
    inline = AS_STORED.replace("a, b, c, m, n, k,", "a, b, c, a.shape[1], b.shape[0], a.shape[0],")
    assert inline != AS_STORED
    cued = [e for e in edits(parsed(inline, TT_TASK), ["transposed-operands"]) if e.cue]
    assert len(cued) == 1 and cued[0].grounded and "the reference transposes `a`" in cued[0].cue
    assert cued[0].source == HONEST.replace("a, b, c, m, n, k,", "a, b, c, a.shape[1], b.shape[0], a.shape[0],")
    assert not any(e.cue for e in edits(parsed(inline, MATMUL_TASK), ["transposed-operands"]))


def test_strides_crossed_with_the_sizes_that_bound_them_are_cued_without_the_reference() -> None:
    """A plain product (nothing transposed) whose launch passes B's strides in falling order: the kernel scales its
    column indices, bounded by `N = b.shape[1]`, with `b.stride(0)`. The grounded edit wins over `stride-argument`'s
    identical swap."""
    crossed = MATMUL.replace("b.stride(0), b.stride(1)", "b.stride(1), b.stride(0)")
    made = [e for e in edits(parsed(crossed, MATMUL_TASK)) if e.source == MATMUL]
    assert [(e.operator, e.grounded) for e in made] == [("transposed-operands", True)]


def test_strides_the_host_names_are_swapped_at_the_launch() -> None:
    named = AS_STORED.replace(
        "    c = torch.empty(",
        "    s_am, s_ak = a.stride()\n    s_bk = b.stride(0)\n    s_bn = b.stride(1)\n    c = torch.empty(",
    ).replace(STORED, "s_am, s_ak,\n        s_bk, s_bn,")
    made = [e for e in edits(parsed(named, TT_TASK), ["transposed-operands"]) if e.cue]
    assert len(made) == 1 and "s_ak, s_am,\n        s_bn, s_bk," in made[0].source


BUGS = {
    "shape-unpack": ("M, K = a.shape", "K, M = a.shape"),
    "size-swap": ("c, M, N, K,", "c, N, M, K,"),
}


@pytest.mark.parametrize("operator", sorted(BUGS))
def test_sizes_from_the_wrong_dimension_are_exchanged_back(operator: str) -> None:
    old, new = BUGS[operator]
    bugged = MATMUL.replace(old, new)
    assert bugged != MATMUL
    made = edits(parsed(bugged, MATMUL_TASK), [operator])
    assert any(e.source == MATMUL for e in made)


def test_size_swap_leaves_block_sizes_alone_and_shape_unpack_skips_other_tuples() -> None:
    made = edits(parsed(MATMUL, MATMUL_TASK), ["size-swap", "shape-unpack"])
    assert {e.description for e in made if e.operator == "size-swap"} == {
        "swap the sizes `M` and `N` at the launch (line 34)",
        "swap the sizes `M` and `K` at the launch (line 34)",
        "swap the sizes `N` and `K` at the launch (line 34)",
    }
    assert [e.line for e in made if e.operator == "shape-unpack"] == [30, 31]  # not `a, b = A.contiguous(), ...`


def test_the_bench_injects_it_and_the_cued_edit_takes_it_back() -> None:
    found = mutants(HONEST, "operands-untransposed")
    assert len(found) == 1
    injected = found[0].source
    assert "a.stride(0), a.stride(1)" in injected and "b.stride(0), b.stride(1)" in injected
    back = [e for e in edits(parsed(injected, TT_TASK), ["transposed-operands"]) if e.cue]
    assert len(back) == 1 and back[0].source == HONEST


def test_operands_passed_as_stored_are_repaired_offline(evaluator: Evaluator, tmp_path: Path) -> None:
    """Both pairs must be swapped: with A's alone the kernel still reads B outside its storage."""
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TT_TASK)
    candidate.write_text(AS_STORED)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert TRANSPOSED in (tmp_path / "fixed.py").read_text()
    accepted = [t for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert [t.operator for t in accepted] == ["transposed-operands"]


def test_a_wrapper_that_normalises_the_channels_is_conjugated_by_the_axis_exchange() -> None:
    """The reference's `LayerNorm(out_channels)` after a convolution normalises the last dimension; the wrapper
    normalises the channels. The exchange is grounded there, offered (ungrounded) for a softmax, and not at all where
    the reference normalises nothing or the function called launches no kernel."""
    made = edits(parsed(NORM_CHANNELS, NORM_TASK), ["axis-swap"])
    assert len(made) == 1 and made[0].grounded and made[0].label == "wrong-stride"
    assert SWAPPED_CALL in made[0].source and "def norm_relu(x, norm):" in made[0].source
    unnormed = NORM_TASK.replace("        self.norm = nn.LayerNorm(out_channels)\n", "")
    softmax = unnormed.replace("torch.relu(self.norm(self.conv(x)))", "torch.softmax(self.conv(x), dim=1)")
    offered = edits(parsed(NORM_CHANNELS, softmax), ["axis-swap"])
    assert len(offered) == 1 and not offered[0].grounded
    plain = unnormed.replace("torch.relu(self.norm(self.conv(x)))", "torch.relu(self.conv(x))")
    assert (
        "LayerNorm(" not in plain and "softmax" not in plain and not edits(parsed(NORM_CHANNELS, plain), ["axis-swap"])
    )
    unlaunched = NORM_CHANNELS.replace("norm_relu_kernel[(n * h * w,)](", "print(")
    assert unlaunched != NORM_CHANNELS and not edits(parsed(unlaunched, NORM_TASK), ["axis-swap"])


def test_layernorm_over_the_channels_is_repaired_offline(evaluator: Evaluator, tmp_path: Path) -> None:
    status, fixed, accepted = offline_repair(evaluator, tmp_path, NORM_TASK, NORM_CHANNELS, 6)
    assert status == "repaired", accepted
    assert SWAPPED_CALL in fixed
    assert accepted == ["axis-swap"]


LOADED_NK = MATMUL.replace(
    "b = tl.load(b_ptr + kk[:, None] * s_bk + cols[None, :] * s_bn,\n"
    "                    mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)",
    "b = tl.load(b_ptr + cols[:, None] * s_bn + kk[None, :] * s_bk,\n"
    "                    mask=(cols[:, None] < N) & (kk[None, :] < K), other=0.0)",
)


def test_a_dot_operand_loaded_in_the_other_order_is_transposed(evaluator: Evaluator, tmp_path: Path) -> None:
    """B's tile loaded as (BN, BK) where the dot wants (BK, BN): in square blocks the values are wrong and the edit is
    one of the dot's two (not grounded); where the compiler says the reduction dimensions differ at the dot's line,
    grounded; the search repairs the square one."""
    assert LOADED_NK != MATMUL
    square = parsed(LOADED_NK, MATMUL_TASK)
    made = edits(square, ["dot-transpose"])
    assert [e.grounded for e in made] == [False, False]
    assert 'acc += tl.dot(a, tl.trans(b), input_precision="ieee")' in made[0].source
    assert 'acc += tl.dot(tl.trans(a), b, input_precision="ieee")' in made[1].source
    line = next(i for i, text in enumerate(LOADED_NK.splitlines(), 1) if "tl.dot(" in text)
    error = f"input and other must have equal reduction dimensions (candidate line {line}: acc += tl.dot(a, b))"
    refused = Program.parse(LOADED_NK, MATMUL_TASK, error=error)
    assert refused is not None and all(e.grounded for e in edits(refused, ["dot-transpose"]))
    assert edits(parsed(MATMUL.replace("tl.dot(a, b,", "tl.dot(a, tl.trans(b),"), MATMUL_TASK), ["dot-transpose"]) == []
    status, fixed, accepted = offline_repair(evaluator, tmp_path, MATMUL_TASK, LOADED_NK, 40)
    assert status == "repaired" and accepted == ["dot-transpose"], accepted
    assert "tl.trans(b)" in fixed


CONV_TASK = (DIMS / "conv1d_task.py").read_text()
CONV_GEMM = (
    MATMUL[: MATMUL.index("class ModelNew")]
    + """class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size))

    def forward(self, x):
        C_out, C_in, k = self.weight.shape
        n = x.shape[0]
        windows = x.unfold(2, k, 1).permute(0, 2, 1, 3).reshape(-1, C_in * k).contiguous()
        w = self.weight.reshape(C_in * k, C_out).contiguous()
        M, K = windows.shape
        c = torch.empty((M, C_out), device=x.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 16), triton.cdiv(C_out, 16))
        _mm[grid](windows, w, c, M, C_out, K, windows.stride(0), windows.stride(1), w.stride(0), w.stride(1),
                  c.stride(0), c.stride(1), BM=16, BN=16, BK=16)
        return c.reshape(n, -1, C_out).permute(0, 2, 1)
"""
)
"""A 1-D convolution as `_mm` of the input's windows and the weight, whose weight is reshaped to (in_channels *
kernel_size, out_channels) with its out_channels axis still first (`reshape-axes`)."""


def test_a_weight_reshaped_with_an_inner_axis_as_a_side_moves_that_axis_there(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`C_out, C_in, k = self.weight.shape`, then `self.weight.reshape(C_in * k, C_out)`: the matrix's columns
    are not the output channels until the axis moves last; the search repairs it through the real evaluator."""
    (made,) = edits(parsed(CONV_GEMM, CONV_TASK), ["reshape-axes"])
    assert "w = self.weight.movedim(0, -1).reshape(C_in * k, C_out).contiguous()" in made.source
    honest = CONV_GEMM.replace("self.weight.reshape(C_in * k, C_out)", "self.weight.reshape(C_out, C_in * k).t()")
    assert edits(parsed(honest, CONV_TASK), ["reshape-axes"]) == []  # a side that is an edge axis: as laid out
    rebound = CONV_GEMM.replace("        n = x.shape[0]\n", "        n = x.shape[0]\n        weight = self.weight\n")
    assert edits(parsed(rebound.replace("self.weight.reshape", "weight.reshape"), CONV_TASK), ["reshape-axes"]) == []
    status, fixed, accepted = offline_repair(evaluator, tmp_path, CONV_TASK, CONV_GEMM, 20)
    assert status == "repaired" and accepted == ["reshape-axes"], accepted
    assert ".movedim(0, -1)" in fixed
