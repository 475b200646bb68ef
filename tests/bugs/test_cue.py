"""Each code cue fires on a small buggy kernel and stays quiet on its fixed version and on the suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from kope.bugs.constants import near_constant
from kope.bugs.cue import CUES, DESCRIPTIONS, ORDER, detect
from kope.ops import list_ops

NORM = """
import torch
import triton
import triton.language as tl


@triton.jit
def _norm_kernel(x_ptr, y_ptr, out_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(y_ptr + row * stride_y + cols, xc * rstd, mask=mask)


def forward(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(n_cols)
    _norm_kernel[(n_rows,)](x, y, y, n_cols, x.stride(0), y.stride(0), 1e-5, BLOCK=block)
    return y
"""

ELEMENTWISE = """
import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tl.store(out_ptr + offs, u, mask=mask)


def forward(x):
    out = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    _gelu_kernel[grid](x, out, n, BLOCK=1024)
    return out
"""

ONLINE = """
import torch
import triton
import triton.language as tl


@triton.jit
def _online_kernel(x_ptr, out_ptr, idx_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    d = tl.zeros([BLOCK], dtype=tl.float32)
    best = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    idx = tl.zeros([BLOCK], dtype=tl.int32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        d = d * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
        better = x > best
        best = tl.where(better, x, best)
        idx = tl.where(better, offs, idx)
    row_max = tl.max(m, axis=0)
    total = tl.sum(d * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(out_ptr + row * stride + offs, tl.exp(x - row_max) / total, mask=offs < n_cols)
    tl.store(idx_ptr + row, tl.min(tl.where(best == tl.max(best, axis=0), idx, n_cols), axis=0))
"""

CARRIED = """
import triton
import triton.language as tl


@triton.jit
def _carried_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    d = tl.full([BLOCK], 1.0, dtype=tl.float32)
    for start in range(BLOCK, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        d = d * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        acc += tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) + tl.sum(d * tl.exp(m - tl.max(m, axis=0)), axis=0))
"""

SOFTMAX = """
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)
"""

TILED = """
import torch
import triton
import triton.language as tl


@triton.jit
def _bias_kernel(x_ptr, b_ptr, out_ptr, M, N, stride_xm, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    x = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :], x + bias[None, :], mask=mask)


def forward(x, b):
    M, N = x.shape
    out = torch.empty_like(x)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    _bias_kernel[grid](x, b, out, M, N, x.stride(0), out.stride(0), BLOCK_M=32, BLOCK_N=32)
    return out
"""

# (cue, template, text in the fixed kernel, the buggy replacement)
CASES = [
    ("load-without-mask", NORM, "cols, mask=mask, other=0.0).to(tl.float32)", "cols).to(tl.float32)"),
    ("store-without-mask", NORM, "xc * rstd, mask=mask)", "xc * rstd)"),
    ("mask-inclusive-bound", NORM, "mask = cols < n_cols", "mask = cols <= n_cols"),
    ("padding-reaches-reduction", NORM, "xc = tl.where(mask, x - mean, 0.0)", "xc = x - mean"),
    ("padding-reaches-reduction", SOFTMAX, 'other=-float("inf")', "other=0.0"),
    ("divide-by-block-size", NORM, "mean = tl.sum(x, axis=0) / n_cols", "mean = tl.sum(x, axis=0) / BLOCK"),
    (
        "divide-by-n-minus-one",
        NORM,
        "var = tl.sum(xc * xc, axis=0) / n_cols",
        "var = tl.sum(xc * xc, axis=0) / (n_cols - 1)",
    ),
    ("eps-outside-sqrt", NORM, "1.0 / tl.sqrt(var + eps)", "1.0 / tl.sqrt(var) + eps"),
    ("rsqrt-without-eps", NORM, "1.0 / tl.sqrt(var + eps)", "1.0 / tl.sqrt(var)"),
    ("unused-eps-param", NORM, "1.0 / tl.sqrt(var + eps)", "1.0 / tl.sqrt(var)"),
    ("single-inner-stride", NORM, "x.stride(0), y.stride(0)", "x.stride(1), y.stride(0)"),
    ("duplicate-stride-arg", NORM, "x.stride(0), y.stride(0)", "x.stride(0), x.stride(0)"),
    ("foreign-stride", NORM, "x_ptr + row * stride_x", "x_ptr + row * stride_y"),
    ("unused-stride-param", NORM, "y_ptr + row * stride_y + cols", "y_ptr + cols"),
    (
        "integer-buffer-for-float",
        NORM,
        "y = torch.empty_like(x)",
        "y = torch.empty(x.shape, device=x.device, dtype=torch.int32)",
    ),
    (
        "half-precision-buffer",
        NORM,
        "y = torch.empty_like(x)",
        "y = torch.empty(x.shape, device=x.device, dtype=torch.float16)",
    ),
    ("half-precision-cast", NORM, "other=0.0).to(tl.float32)", "other=0.0).to(tl.float16)"),
    ("float-cast-to-int", NORM, "xc * rstd, mask=mask)", "(xc * rstd).to(tl.int32), mask=mask)"),
    ("grid-floor-div", ELEMENTWISE, "triton.cdiv(n, 1024)", "n // 1024"),
    ("runtime-constexpr", ELEMENTWISE, "n, BLOCK: tl.constexpr)", "n, BLOCK)"),
    ("suspicious-constant", ELEMENTWISE, "0.044715 * x", "0.44715 * x"),
    ("suspicious-constant", ELEMENTWISE, "0.7978845608028654 *", "0.7978845608082654 *"),
    ("offset-literal-shift", ELEMENTWISE, "x_ptr + offs, mask", "x_ptr + offs + 1, mask"),
    ("partial-store-into-empty", ELEMENTWISE, "u, mask=mask)", "u, mask=mask & (x > 0))"),
    (
        "store-shared-address",
        ELEMENTWISE,
        "tl.store(out_ptr + offs, u, mask=mask)",
        "tl.store(out_ptr, tl.sum(u, axis=0))",
    ),
    ("unused-program-id", ELEMENTWISE, "offs = pid * BLOCK + tl.arange(0, BLOCK)", "offs = tl.arange(0, BLOCK)"),
    ("inf-minus-inf", ONLINE, "tl.exp(m - m_safe) + tl.exp(x - m_safe)", "tl.exp(m - m_new) + tl.exp(x - m_new)"),
    (
        "max-init-zero",
        ONLINE,
        'best = tl.full([BLOCK], -float("inf"), dtype=tl.float32)',
        "best = tl.zeros([BLOCK], dtype=tl.float32)",
    ),
    ("block-relative-index", ONLINE, "idx = tl.where(better, offs, idx)", "idx = tl.where(better, cols, idx)"),
    (
        "loop-stops-early",
        ONLINE,
        "    for start in range(0, n_cols, BLOCK):\n        offs = start + cols\n        x = tl.load(x_ptr + "
        'row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)\n        m_new',
        "    for start in range(0, n_cols - BLOCK, BLOCK):\n        offs = start + cols\n        x = "
        'tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)\n        '
        "m_new",
    ),
    (
        "store-loop-skips-start",
        ONLINE,
        "    for start in range(0, n_cols, BLOCK):\n        offs = start + cols\n        x = tl.load(x_ptr + "
        'row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)\n        tl.store',
        "    for start in range(BLOCK, n_cols, BLOCK):\n        offs = start + cols\n        x = tl.load(x_ptr "
        '+ row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)\n        tl.store',
    ),
    (
        "online-normalizer-init",
        CARRIED,
        "d = tl.full([BLOCK], 1.0, dtype=tl.float32)",
        "d = tl.zeros([BLOCK], dtype=tl.float32)",
    ),
    ("accumulator-overwritten-in-loop", CARRIED, "        acc += tl.load(", "        acc = tl.load("),
    (
        "accumulator-overwritten-in-loop",
        CARRIED,
        "        offs = start + cols\n        acc +=",
        "        offs = start + cols\n        acc = tl.zeros([BLOCK], dtype=tl.float32)\n        acc +=",
    ),
    ("exp-without-max-shift", SOFTMAX, "e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)", "e = tl.exp(x)"),
    (
        "exp2-without-log2e",
        SOFTMAX,
        "tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)",
        "tl.exp2(x - tl.max(x, axis=0))",
    ),
    ("broadcast-axis-mismatch", TILED, "x + bias[None, :]", "x + bias[:, None]"),
    ("grid-axis-missing", TILED, "grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))", "grid = (triton.cdiv(M, 32), 1)"),
]


def _fired(source: str, cue: str) -> bool:
    return any(hit.cue == cue for hit in detect(source, [cue]))


@pytest.mark.parametrize(("cue", "template", "fixed", "buggy"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_cue_fires_on_the_bug_and_not_on_the_fix(cue: str, template: str, fixed: str, buggy: str) -> None:
    assert template.count(fixed) == 1
    assert not _fired(template, cue), f"{cue} fires on the fixed kernel"
    assert _fired(template.replace(fixed, buggy), cue), f"{cue} misses the bug"


def test_every_cue_has_a_case() -> None:
    assert set(CUES) == {case[0] for case in CASES}


def test_the_fixed_templates_raise_no_cue_at_all() -> None:
    for template in (NORM, ELEMENTWISE, ONLINE, CARRIED, SOFTMAX, TILED):
        assert detect(template) == []


@pytest.mark.parametrize("op", [op.name for op in list_ops()])
def test_cues_stay_quiet_on_the_correct_suite_kernels(op: str) -> None:
    kernel = next(o for o in list_ops() if o.name == op).kernel_path
    assert detect(Path(kernel).read_text()) == []


def test_a_cue_reports_the_line_and_its_text() -> None:
    hits = detect(NORM.replace("mask = cols < n_cols", "mask = cols <= n_cols"), ["mask-inclusive-bound"])
    assert [h.text for h in hits] == ["mask = cols <= n_cols"]


def test_near_constant_tells_slips_from_truncations() -> None:
    assert near_constant(0.44715, "0.44715") == "GELU tanh cubic coefficient"
    assert near_constant(0.04715, "0.04715") == "GELU tanh cubic coefficient"
    assert near_constant(0.7978845608, "0.7978845608") is None
    assert near_constant(1.4427, "1.4427") is None
    assert near_constant(0.5, "0.5") is None


def test_unparsable_source_has_no_cues() -> None:
    assert detect("def broken(:\n") == []


def test_every_cue_of_every_family_runs_in_the_listed_order() -> None:
    assert list(CUES) == list(DESCRIPTIONS) == list(ORDER), "a new cue goes into ORDER, where it should run"


def test_a_candidate_nested_deeper_than_a_cue_recurses_gets_the_other_cues_not_a_crash() -> None:
    deep = " + ".join(["offs"] * 400)
    source = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        f"    x = tl.load(x_ptr + 0 * ({deep}) + offs)\n"
        "    tl.store(y_ptr + offs, x)\n"
    )
    hits = detect(source)
    assert isinstance(hits, list)
