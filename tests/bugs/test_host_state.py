"""`ModelNew`'s state against the reference's (`layer-bias-flag`, `param-shape`, `param-transpose`) and an
activation assembled from a hand-written helper (`formula-swap`), on small hand-written sources; honest ones get no
such edit."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, verdicts

from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator

HOST = FIXTURES / "host"

TASK = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = torch.nn.functional.gelu(x)
        return x + self.bias

def get_inputs():
    return [torch.rand(2, 3, 8, 8)]

def get_init_inputs():
    return [3, 4, 3, (4, 1, 1)]
"""

CANDIDATE = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_kernel(x_ptr, b_ptr, y_ptr, n, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = inner * (1.0 - inner * inner / 3.0)
    t = tl.minimum(tl.maximum(t, -1.0), 1.0)
    g = 0.5 * x * (1.0 + t)
    b = tl.load(b_ptr + (offs // HW) % C, mask=mask, other=0.0)
    tl.store(y_ptr + offs, g + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x):
        x = self.conv(x)
        y = torch.empty_like(x)
        n = x.numel()
        gelu_bias_kernel[(triton.cdiv(n, 256),)](x, self.bias, y, n, x.shape[1], x.shape[2] * x.shape[3], BLOCK=256)
        return y
"""


def _program(source: str, reference: str = TASK) -> Program:
    parsed = Program.parse(source, reference)
    assert parsed is not None
    return parsed


def test_a_layer_built_without_the_reference_bias_gets_it_back() -> None:
    (edit,) = edits(_program(CANDIDATE), ["layer-bias-flag"])
    assert "nn.Conv2d(in_channels, out_channels, kernel_size, bias=True)" in edit.source
    assert edit.cue and edit.grounded  # forward runs `self.conv(x)` itself


def test_a_layer_the_kernel_reads_is_cued_not_grounded() -> None:
    source = CANDIDATE.replace("x = self.conv(x)", "x = torch.nn.functional.conv2d(x, self.conv.weight)")
    (edit,) = edits(_program(source), ["layer-bias-flag"])
    assert edit.cue and not edit.grounded


def test_a_hard_coded_parameter_shape_gets_the_reference_shape() -> None:
    (edit,) = edits(_program(CANDIDATE), ["param-shape"])
    assert "self.bias = nn.Parameter(torch.randn(bias_shape))" in edit.source
    assert edit.grounded


def test_renamed_init_parameters_are_followed() -> None:
    source = CANDIDATE.replace("kernel_size, bias_shape):", "kernel_size, shape):")
    (edit,) = edits(_program(source), ["param-shape"])
    assert "nn.Parameter(torch.randn(shape))" in edit.source


def test_an_activation_assembled_from_a_hand_written_tanh_is_a_formula_site() -> None:
    made = edits(_program(CANDIDATE), ["formula-swap"])
    at_g = [e for e in made if e.description.startswith("`g = ...`")]
    assert at_g and "of `x`" in at_g[0].description and at_g[0].cue
    assert "g = 0.5 * (x) * (1.0 + tl.erf((x) * 0.70710" in at_g[0].source
    assert made[0] is at_g[0]  # the finished activation first
    at_t = [e for e in made if e.description.startswith("`t = ...`")]
    assert at_t and not any(e.cue for e in at_t)  # the helper is not cued


def test_honest_sources_get_no_state_edit() -> None:
    honest = CANDIDATE.replace(", bias=False)", ")").replace("torch.randn(4)", "torch.randn(bias_shape)")
    assert edits(_program(honest), ["layer-bias-flag", "param-shape"]) == []
    unbiased = TASK.replace("nn.Conv2d(in_channels, out_channels, kernel_size)", "nn.Conv2d(1, 1, 1, bias=False)")
    assert edits(_program(CANDIDATE, unbiased), ["layer-bias-flag"]) == []
    assert edits(_program(CANDIDATE, ""), ["layer-bias-flag", "param-shape"]) == []


def test_a_weight_laid_out_in_by_out_for_a_square_linear_is_laid_out_as_the_reference_and_read_transposed(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = HOST / "linear_task.py"
    program = _program((HOST / "linear_weight_in_out.py").read_text(), task.read_text())
    (edit,) = edits(program, ["param-transpose"])
    assert edit.grounded  # the task's in_features and out_features are equal
    assert "nn.Parameter(torch.empty(out_features, in_features))" in edit.source
    assert "w = self.weight.t().contiguous()" in edit.source
    assert "self.weight.uniform_(" in edit.source  # reads in `__init__` keep the parameter itself
    assert verdicts(evaluator, task, [program.text, edit.source], tmp_path) == ["fail", "pass"]


def test_a_weight_in_the_reference_layout_or_a_rectangular_one_is_left_or_only_offered() -> None:
    task = (HOST / "linear_task.py").read_text()
    candidate = (HOST / "linear_weight_in_out.py").read_text()
    honest = candidate.replace("torch.empty(in_features, out_features)", "torch.empty(out_features, in_features)")
    assert edits(_program(honest, task), ["param-transpose"]) == []
    rectangular = task.replace("out_features = 48", "out_features = 32")
    (edit,) = edits(_program(candidate, rectangular), ["param-transpose"])
    assert not edit.grounded  # kope's copy of the reference's weight tells the layouts apart there
    assert edits(_program(candidate, ""), ["param-transpose"]) == []
