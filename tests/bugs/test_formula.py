"""Reference-guided formula repair, self-operations and cross-program stores: real Triton kernels repaired offline
through the real evaluator (small shapes), and the edits the operators offer."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import FIXTURES

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.edit import Program, edits
from kope.cases.task import load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.repair.search import RepairSearch, SearchConfig

TASK = textwrap.dedent(
    '''
    """{doc}"""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    batch_size = 16
    dim = 300


    class Model(nn.Module):
        def __init__(self, alpha):
            super().__init__()
            self.alpha = alpha

        def forward(self, x):
            return {call}


    def get_inputs():
        return [torch.randn(batch_size, dim) * 3.0]


    def get_init_inputs():
        return [0.7]


    def get_cases():
        return [{{"batch_size": 16, "dim": 300}}, {{"batch_size": 3, "dim": 1031}}]
    '''
)

KERNEL = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _act_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        y = {formula}
        tl.store(out_ptr + offs, y, mask=mask)


    class ModelNew(nn.Module):
        def __init__(self, alpha):
            super().__init__()
            self.alpha = alpha

        def forward(self, x):
            x = x.contiguous()
            out = torch.empty_like(x)
            n = x.numel()
            _act_kernel[(triton.cdiv(n, 256),)](x, out, n, self.alpha, BLOCK=256)
            return out
    """
)


def repair(evaluator: Evaluator, tmp_path: Path, call: str, formula: str) -> tuple[str, str]:
    task = tmp_path / "task.py"
    task.write_text(TASK.format(doc="An activation.", call=call))
    candidate = tmp_path / "candidate.py"
    candidate.write_text(KERNEL.format(formula=formula))
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=24))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    assert report.status == "repaired", report.search
    assert report.tokens.prompt == 0
    return (tmp_path / "fixed.py").read_text(), accepted[0] if accepted else ""


def test_swish_stored_as_its_sigmoid_gets_the_missing_factor(evaluator: Evaluator, tmp_path: Path) -> None:
    fixed, operator = repair(evaluator, tmp_path, "F.silu(x)", "1.0 / (1.0 + tl.exp(-x))")
    assert operator.startswith("formula-")
    assert "(x) * (1.0 / (1.0 + tl.exp(-(x))))" in fixed


def test_elu_negative_branch_written_linear_gets_the_exponential(evaluator: Evaluator, tmp_path: Path) -> None:
    fixed, operator = repair(evaluator, tmp_path, "F.elu(x, alpha=self.alpha)", "tl.where(x > 0, x, alpha * (x + 1.0))")
    assert operator.startswith("formula-")
    assert "0.7 * (tl.exp(tl.minimum(x, 0.0)) - 1.0)" in fixed


def test_a_rational_tanh_gets_the_reference_tanh_of_its_variable(evaluator: Evaluator, tmp_path: Path) -> None:
    """`t * (27 + t * t) / (27 + 9 * t * t)`, a fast tanh models write, is off by up to 0.02 at |t| = 1 and worse
    beyond; the reference's tanh of `t` replaces it (a ratio of polynomials of one value is a formula site)."""
    formula = "x * (27.0 + x * x) / (27.0 + 9.0 * x * x)"
    program = Program.parse(KERNEL.format(formula=formula), TASK.format(doc="", call="torch.tanh(x)"))
    assert program is not None
    swaps = [e for e in edits(program, ["formula-swap"]) if e.description.startswith("`y = ...`")]
    assert swaps and swaps[0].description == "`y = ...` -> the reference's tanh of `x`" and swaps[0].cue
    fixed, operator = repair(evaluator, tmp_path, "torch.tanh(x)", formula)
    assert operator.startswith("formula-") and "27.0" not in fixed


def test_formula_operators_use_the_reference_arguments_and_need_a_reference() -> None:
    source = KERNEL.format(formula="tl.minimum(tl.maximum(x, 2.0), -2.0)")
    reference = TASK.format(doc="", call="F.hardtanh(x, min_val=-2.0, max_val=2.0)")
    program = Program.parse(source, reference)
    assert program is not None
    made = [e for e in edits(program, ["formula-store", "formula-swap"])]
    assert any("tl.minimum(tl.maximum(x, -2.0), 2.0)" in e.source for e in made)
    assert all(e.label == "wrong-constant" for e in made)
    assert any(e.cue for e in made)
    bare = Program.parse(source, "")
    assert bare is not None and edits(bare, ["formula-store", "formula-swap"]) == []


def test_a_formula_is_offered_of_the_value_a_branch_tests_when_the_branches_moved_on_from_it() -> None:
    """`tl.where(tl.abs(x) > 2.0, 1.0, y)` stores `y`, three steps from the load; the test reads `x`, the input."""
    from conftest import FIXTURES

    scaled = FIXTURES / "scaled"
    program = Program.parse((scaled / "tanh_saturated.py").read_text(), (scaled / "tanh_task.py").read_text())
    assert program is not None
    stored = [e.description for e in edits(program, ["formula-store"])]
    assert stored[0] == "stored `saturated` -> the reference's tanh of `x`"


SELF_DIVISION = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def _k(x_ptr, out_ptr, n, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        tiles = BLOCK_N // BLOCK_N
        offs = tl.program_id(0) * BLOCK_N * tiles + tl.arange(0, BLOCK_N)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    """
)


def test_self_operand_offers_the_other_block_size_on_either_side() -> None:
    program = Program.parse(SELF_DIVISION)
    assert program is not None
    made = {e.source for e in edits(program, ["self-operand"])}
    assert any("tiles = BLOCK_N // BLOCK_K" in s for s in made)
    assert any("tiles = BLOCK_K // BLOCK_N" in s for s in made)
    assert all(e.cue for e in edits(program, ["self-operand"]))


SUM_TASK = textwrap.dedent(
    '''
    """The sum of every element, as a one-element tensor."""
    import torch
    import torch.nn as nn

    n = 3000


    class Model(nn.Module):
        def forward(self, x):
            return x.sum().reshape(1)


    def get_inputs():
        return [torch.randn(n)]


    def get_init_inputs():
        return []


    def get_cases():
        return [{"n": 3000}, {"n": 777}]
    '''
)

SUM_KERNEL = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr, tl.sum(x, axis=0))


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(1, device=x.device, dtype=x.dtype)
            n = x.numel()
            _sum_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
            return out
    """
)


def test_several_programs_writing_one_element_add_into_a_zeroed_output(evaluator: Evaluator, tmp_path: Path) -> None:
    program = Program.parse(SUM_KERNEL, SUM_TASK)
    assert program is not None
    made = edits(program, ["cross-program-atomic"])
    assert len(made) == 1 and made[0].cue
    assert "tl.atomic_add(out_ptr" in made[0].source and "torch.zeros(1" in made[0].source
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(SUM_TASK)
    candidate.write_text(SUM_KERNEL)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=16))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "tl.atomic_add" in (tmp_path / "fixed.py").read_text()


def test_a_store_that_depends_on_the_program_id_is_not_a_cross_program_write() -> None:
    program = Program.parse(SELF_DIVISION.replace("BLOCK_N // BLOCK_N", "1"))
    assert program is not None and edits(program, ["cross-program-atomic"]) == []


CAPPED_DIR = FIXTURES / "capped"
BIG_TASK = (CAPPED_DIR / "relu_million_task.py").read_text()
CAPPED = (CAPPED_DIR / "relu_capped.py").read_text()


def test_a_version_right_on_every_derived_case_but_wrong_at_the_task_own_size_is_not_accepted(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    # The grid is capped at 512 programs of 1024: right up to 524,288 elements (every derived case), wrong at the
    # task's own million. The search checks its own sizes before accepting and counts the false repair.
    task, candidate = tmp_path / "task.py", tmp_path / "capped.py"
    task.write_text(BIG_TASK)
    candidate.write_text(CAPPED)
    loaded = load_task(task)
    search = RepairSearch(evaluator, SearchConfig(max_evaluations=2, batch=1, second_edits=0))
    own = search.own_size_case(loaded, EvalOptions())
    assert own is not None and dict(own.overrides) == {} and not own.visible
    visible = [c for c in evaluator.cases(loaded) if c.visible]
    result = search.run(loaded, CAPPED, None, visible, lambda s: True, scratch=tmp_path / "scratch")
    assert result.accepted is None or "512" not in result.accepted
    assert result.false_repairs >= 1 and result.own_size_case


TRIPLET_TASK = textwrap.dedent(
    '''
    """Triplet margin loss (Euclidean distances), averaged over the batch."""
    import torch
    import torch.nn as nn

    batch_size = 16
    features = 200


    class Model(nn.Module):
        def __init__(self, margin=1.0):
            super().__init__()
            self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)

        def forward(self, anchor, positive, negative):
            return self.loss_fn(anchor, positive, negative)


    def get_inputs():
        return [torch.randn(batch_size, features) * 0.1 for _ in range(3)]


    def get_init_inputs():
        return [1.0]


    def get_cases():
        return [{"batch_size": 16, "features": 200}, {"batch_size": 5, "features": 333}]
    '''
)

TRIPLET_SQUARED = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl


    @triton.jit
    def _triplet_kernel(a_ptr, p_ptr, n_ptr, loss_ptr, margin, features, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        d_ap = 0.0
        d_an = 0.0
        for start in range(0, features, BLOCK):
            idx = start + tl.arange(0, BLOCK)
            mask = idx < features
            a = tl.load(a_ptr + row * features + idx, mask=mask, other=0.0)
            p = tl.load(p_ptr + row * features + idx, mask=mask, other=0.0)
            n = tl.load(n_ptr + row * features + idx, mask=mask, other=0.0)
            d_ap += tl.sum((a - p) * (a - p), axis=0)
            d_an += tl.sum((a - n) * (a - n), axis=0)
        tl.store(loss_ptr + row, tl.maximum(d_ap - d_an + margin, 0.0))


    class ModelNew(nn.Module):
        def __init__(self, margin=1.0):
            super().__init__()
            self.margin = margin

        def forward(self, anchor, positive, negative):
            batch, features = anchor.shape
            losses = torch.empty(batch, device=anchor.device, dtype=anchor.dtype)
            block = min(triton.next_power_of_2(features), 64)
            _triplet_kernel[(batch,)](anchor, positive, negative, losses, self.margin, features, BLOCK=block)
            return losses.mean()
    """
)


def test_a_triplet_loss_on_squared_distances_takes_their_square_root(evaluator: Evaluator, tmp_path: Path) -> None:
    program = Program.parse(TRIPLET_SQUARED, TRIPLET_TASK)
    assert program is not None
    made = edits(program, ["norm-sqrt"])
    assert len(made) == 1 and "tl.sqrt(d_ap) - tl.sqrt(d_an)" in made[0].source and made[0].cue
    assert edits(Program.parse(TRIPLET_SQUARED, SUM_TASK) or program, ["norm-sqrt"]) == []
    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(TRIPLET_TASK)
    candidate.write_text(TRIPLET_SQUARED)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=24))
    report = DebugLoop(None, evaluator, config=config).run(task, candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search
    assert "tl.sqrt(d_ap)" in (tmp_path / "fixed.py").read_text()


def test_drop_cap_offers_each_argument_of_a_host_min_and_cues_a_capped_block() -> None:
    program = Program.parse(TRIPLET_SQUARED)
    assert program is not None
    made = edits(program, ["drop-cap"])
    assert {e.source.count("block = triton.next_power_of_2(features)") for e in made} == {0, 1}
    assert all(e.cue for e in made)


def test_a_written_out_gate_and_a_wrong_padding_are_repaired_together(evaluator: Evaluator, tmp_path: Path) -> None:
    """The reference writes its gate out (`x * torch.sigmoid(x + 3) / 6`, no activation of the table); the kernel
    computes a hard gate of its log-sum-exp and pads the channels with 0.0. The gate times its own input is a
    formula site though the input is an activation's work too, its input first; the formula's fix halves the mean
    error without one element within tolerance, so the search keeps it as a base and adds the padding's."""
    from conftest import FIXTURES, offline_repair

    folder = FIXTURES / "formula"
    task, kernel = (folder / "lse_gate_task.py").read_text(), (folder / "lse_gate_two_bugs.py").read_text()
    program = Program.parse(kernel, task)
    assert program is not None
    gate = "`gated = ...` -> the reference's `x * torch.sigmoid(x + 3) / 6`"
    swaps = [e.description for e in edits(program, ["formula-swap"]) if e.description.startswith(gate)]
    assert swaps[0] == f"{gate} of `lse`"
    status, fixed, accepted = offline_repair(evaluator, tmp_path, task, kernel, 40)
    assert status == "repaired", accepted
    assert "tl.exp(-(((lse) + 3.0)))" in fixed and "-float(" in fixed


def test_no_formula_is_offered_of_a_name_bound_to_a_number() -> None:
    """`zero = 0.0; y = tl.where(x > zero, x, zero)`: the reference's relu of `x`, never of `zero` (a constant store,
    which can score better than a wrong value and then mislead every later round)."""
    source = KERNEL.format(formula="tl.where(x > zero, x * 0.5, zero)").replace(
        "    offs = tl.program_id(0)", "    zero = 0.0\n    offs = tl.program_id(0)"
    )
    program = Program.parse(source, TASK.format(doc="", call="torch.relu(x)"))
    assert program is not None and "zero = 0.0" in source
    made = edits(program, ["formula-store", "formula-swap"])
    assert made and not any("of `zero`" in e.description for e in made), [e.description for e in made]
    assert any("relu" in e.description and "of `x`" in e.description for e in made)


def test_squared_distances_summed_through_a_name_of_elementwise_squares_take_their_square_root() -> None:
    """`sq = (a - p) * (a - p)` then `d_ap += tl.sum(sq)`: the sum is the squared distance, the elementwise
    squares are not (their reads are left)."""
    named = TRIPLET_SQUARED.replace(
        "d_ap += tl.sum((a - p) * (a - p), axis=0)", "sq_ap = (a - p) * (a - p)\n        d_ap += tl.sum(sq_ap, axis=0)"
    ).replace("d_an += tl.sum((a - n) * (a - n), axis=0)", "sq_an = (a - n) * (a - n)\n        d_an += tl.sum(sq_an)")
    program = Program.parse(named, TRIPLET_TASK)
    assert program is not None
    (made,) = edits(program, ["norm-sqrt"])
    assert "tl.sqrt(d_ap) - tl.sqrt(d_an)" in made.source and "tl.sqrt(sq_" not in made.source
