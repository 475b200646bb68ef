"""`ModelNew`'s state against the reference's (`layer-bias-flag`, `param-shape`) and an activation assembled from a
hand-written helper (`formula-swap`), on small hand-written sources; honest ones get no such edit."""

from __future__ import annotations

from kope.bugs.edit import Program, edits

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
