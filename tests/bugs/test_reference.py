"""The reference's activations: recognised from its source, and the table's formulas checked against PyTorch.

Each formula runs as a real Triton kernel (Triton's interpreter, in a subprocess) on inputs that reach its
hard regions (large negative and positive values, zero, its thresholds) and is compared with PyTorch's own
function on the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import torch

from kope.bugs.reference import FORMULAS, Activation, activations, expressions

CASES: list[tuple[str, dict[str, float], str]] = [
    ("relu", {}, "F.relu(x)"),
    ("relu6", {}, "F.relu6(x)"),
    ("leaky_relu", {}, "F.leaky_relu(x)"),
    ("leaky_relu", {"negative_slope": 0.2}, "F.leaky_relu(x, 0.2)"),
    ("elu", {}, "F.elu(x)"),
    ("elu", {"alpha": 0.5}, "F.elu(x, alpha=0.5)"),
    ("selu", {}, "F.selu(x)"),
    ("celu", {"alpha": 2.0}, "F.celu(x, alpha=2.0)"),
    ("softplus", {}, "F.softplus(x)"),
    ("softplus", {"beta": 2.0, "threshold": 10.0}, "F.softplus(x, beta=2.0, threshold=10.0)"),
    ("gelu", {}, "F.gelu(x)"),
    ("gelu", {"approximate": 1.0}, "F.gelu(x, approximate='tanh')"),
    ("hardtanh", {}, "F.hardtanh(x)"),
    ("hardtanh", {"min_val": -2.0, "max_val": 2.0}, "F.hardtanh(x, -2.0, 2.0)"),
    ("hardsigmoid", {}, "F.hardsigmoid(x)"),
    ("hardswish", {}, "F.hardswish(x)"),
    ("silu", {}, "F.silu(x)"),
    ("mish", {}, "F.mish(x)"),
    ("tanh", {}, "torch.tanh(x)"),
    ("sigmoid", {}, "torch.sigmoid(x)"),
    ("softsign", {}, "F.softsign(x)"),
    ("logsigmoid", {}, "F.logsigmoid(x)"),
    ("hardshrink", {"lambd": 0.3}, "F.hardshrink(x, 0.3)"),
    ("softshrink", {}, "F.softshrink(x)"),
]

_SCRIPT = """
import json, sys
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
{kernels}
x = torch.cat([torch.linspace(-60.0, 60.0, 481), torch.tensor([0.0, -0.5, 0.5, 3.0, -3.0, 6.0, 10.0, 20.0, 5.0, 9.99,
    10.01, 1e-4, -1e-4, -88.0, 88.0])]).to(torch.float32)
n = x.numel()
out = {{}}
for index, (kernel, expected) in enumerate(PAIRS):
    y = torch.empty_like(x)
    kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
    want = expected(x.double())
    ok = torch.isfinite(y).all().item() and torch.allclose(y.double(), want, rtol=1e-5, atol=1e-5)
    out[index] = [bool(ok), float((y.double() - want).abs().max())]
print(json.dumps(out))
"""

_KERNEL = """
@triton.jit
def k{index}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = {formula}
    tl.store(y_ptr + offs, y, mask=mask)
"""


def test_every_formula_of_the_table_matches_pytorch_in_a_triton_kernel(tmp_path: Path) -> None:
    assert {name for name, _, _ in CASES} == set(FORMULAS)
    kernels = "".join(
        _KERNEL.format(index=i, formula=FORMULAS[name].triton("x", params)) for i, (name, params, _) in enumerate(CASES)
    )
    pairs = ", ".join(f"(k{i}, lambda x: {torch_call})" for i, (_, _, torch_call) in enumerate(CASES))
    script = tmp_path / "formulas.py"
    script.write_text(_SCRIPT.format(kernels=kernels).replace("PAIRS", f"[{pairs}]"))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    wrong = {CASES[int(i)][2]: err for i, (ok, err) in results.items() if not ok}
    assert not wrong, wrong


REFERENCE = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Model(nn.Module):
        def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max, beta=2.0):
            super().__init__()
            self.gemm = nn.Linear(in_features, out_features)
            self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)
            self.gelu = nn.GELU(approximate="tanh")
            self.beta = beta

        def forward(self, x):
            x = self.gemm(x)
            x = self.hardtanh(x)
            x = self.gelu(x)
            x = F.softplus(x, beta=self.beta)
            x = torch.sigmoid(x) * x
            return F.leaky_relu(x, negative_slope=negative) + x.relu()

    negative = 0.125
    hardtanh_min = -2
    hardtanh_max = 2

    def get_inputs():
        return [torch.rand(8, 16)]

    def get_init_inputs():
        return [16, 32, 0.5, hardtanh_min, hardtanh_max]
    """
)


def test_activations_are_read_from_functions_modules_and_methods_with_their_arguments_resolved() -> None:
    found = activations(REFERENCE)
    assert [(a.name, a.params) for a in found] == [
        ("hardtanh", {"min_val": -2.0, "max_val": 2.0}),
        ("gelu", {"approximate": 1.0}),
        ("softplus", {"beta": 2.0}),
        ("silu", {}),
        ("leaky_relu", {"negative_slope": 0.125}),
        ("relu", {}),
    ]
    assert [a.line for a in found] == [16, 17, 18, 19, 20, 20]
    assert found[0].text() == "hardtanh(min_val=-2, max_val=2)"
    assert isinstance(found[0], Activation)


def test_a_reference_without_a_model_or_that_does_not_parse_has_no_activations() -> None:
    assert activations("def f(:\n") == []
    assert activations("import torch\n\ndef f(x):\n    return torch.sigmoid(x)\n") == []


def test_nested_activations_are_listed_in_the_order_they_are_applied() -> None:
    nested = REFERENCE.replace("x = F.softplus(x, beta=self.beta)", "x = F.softplus(torch.tanh(x), beta=self.beta)")
    assert [a.name for a in activations(nested)][2:4] == ["tanh", "softplus"]


def test_an_activation_multiplied_by_its_own_input_is_gated_and_a_written_out_swish_is_silu() -> None:
    gate = REFERENCE.replace("x = F.softplus(x, beta=self.beta)", "x = x * F.hardswish(x)")
    found = activations(gate)
    hardswish = next(a for a in found if a.name == "hardswish")
    assert hardswish.gated and hardswish.text() == "hardswish times its input"
    assert hardswish.triton("v") == f"v * ({Activation('hardswish').triton('v')})"
    swish = REFERENCE.replace("x = F.softplus(x, beta=self.beta)", "x = torch.sigmoid(x) * x")
    written = next(a for a in activations(swish) if a.line == 18)
    assert (written.name, written.gated) == ("silu", False)
    x = torch.linspace(-5.0, 5.0, 41)
    gated_value = eval(hardswish.triton("x"), {"x": x, "tl": _TorchAsTl})
    assert torch.allclose(gated_value, x * torch.nn.functional.hardswish(x), atol=1e-6)


class _TorchAsTl:
    """Enough of `triton.language` for the table's elementwise formulas on CPU tensors."""

    minimum = staticmethod(lambda a, b: torch.minimum(a, torch.as_tensor(b)))
    maximum = staticmethod(lambda a, b: torch.maximum(a, torch.as_tensor(b)))


WRITTEN = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    low = -0.5

    class Model(nn.Module):
        def __init__(self, channels, scale, bias_shape):
            super().__init__()
            self.conv = nn.Conv2d(channels, channels, 3)
            self.scale = scale
            self.bias = nn.Parameter(torch.randn(bias_shape))

        def forward(self, x):
            x = self.conv(x)
            x = x * torch.sigmoid(x + 3) / 6
            x = torch.clamp(x, min=low, max=self.scale)
            x = x / (1 + torch.abs(x))
            x = torch.where(x > 0, x, x * 0.1)
            x = x * torch.clamp((x + 3) / 6, 0, 1)
            x = F.softplus(x * 2.0, beta=0.5) - 1.0
            x = torch.log1p(torch.exp(-x ** 2)) * self.scale
            x = x.clamp(min=-0.25)
            x = 0.5 / (2.0 + torch.abs(x)) ** 2
            y = torch.relu(x)
            y = torch.sigmoid(y) * y
            y = y + self.bias
            return torch.sum(y, dim=1)

    def get_inputs():
        return [torch.rand(2, 3, 8, 8)]

    def get_init_inputs():
        return [3, 1.5, (3, 1, 1)]
    """
)

WRITTEN_TORCH = [
    "x * torch.sigmoid(x + 3) / 6",
    "torch.clamp(x, min=-0.5, max=1.5)",
    "x / (1 + torch.abs(x))",
    "torch.where(x > 0, x, x * 0.1)",
    "x * torch.clamp((x + 3) / 6, 0, 1)",
    "F.softplus(x * 2.0, beta=0.5) - 1.0",
    "torch.log1p(torch.exp(-x ** 2)) * 1.5",
    "x.clamp(min=-0.25)",
    "0.5 / (2.0 + torch.abs(x)) ** 2",
]


def test_formulas_the_reference_writes_out_are_read_and_match_pytorch_in_a_triton_kernel(tmp_path: Path) -> None:
    """Steps written out of calls and arithmetic on one tensor are read with their names bound to numbers, and their
    Triton forms agree with PyTorch; an activation of the table (or one times its input), a step that reads a
    parameter tensor and a reduction are not among them."""
    found = expressions(WRITTEN)
    assert [e.source for e in found] == [
        "x * torch.sigmoid(x + 3) / 6",
        "torch.clamp(x, min=low, max=self.scale)",
        "x / (1 + torch.abs(x))",
        "torch.where(x > 0, x, x * 0.1)",
        "x * torch.clamp((x + 3) / 6, 0, 1)",
        "F.softplus(x * 2.0, beta=0.5) - 1.0",
        "torch.log1p(torch.exp(-x ** 2)) * self.scale",
        "x.clamp(min=-0.25)",
        "0.5 / (2.0 + torch.abs(x)) ** 2",
    ]
    kernels = "".join(_KERNEL.format(index=i, formula=e.triton("x")) for i, e in enumerate(found))
    pairs = ", ".join(f"(k{i}, lambda x: {torch_call})" for i, torch_call in enumerate(WRITTEN_TORCH))
    script = tmp_path / "written.py"
    script.write_text(_SCRIPT.format(kernels=kernels).replace("PAIRS", f"[{pairs}]"))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    wrong = {WRITTEN_TORCH[int(i)]: err for i, (ok, err) in results.items() if not ok}
    assert not wrong, wrong


def test_only_formulas_of_one_tensor_with_a_call_that_triton_has_are_written_out() -> None:
    """In REFERENCE, every step is one activation of the table (or one times its input) but the sum of two; a step
    without a call, of two tensors, or with a call Triton has no form of is not one either."""
    assert [e.source for e in expressions(REFERENCE)] == ["F.leaky_relu(x, negative_slope=negative) + x.relu()"]
    others = WRITTEN.replace("x = x * torch.sigmoid(x + 3) / 6", "x = x * 2.0 + torch.cumsum(x, 1) + x / y")
    assert "torch.cumsum" not in " ".join(e.source for e in expressions(others))
    assert expressions("not python (") == []
