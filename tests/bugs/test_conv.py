"""Convolution taps: `flat-tap` un-flattens a tap position recovered by `//` and `%` from a difference of flattened
positions, on a small hand-written transposed convolution; honest decompositions get no edit; the edited kernel
computes PyTorch's transposed convolution in Triton's interpreter, the original does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kope.bugs.edit import Program, edits

TASK = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(1, 1, kernel_size, bias=False)

    def forward(self, x):
        return self.conv(x)

def get_inputs():
    return [torch.rand(1, 1, 5, 6)]

def get_init_inputs():
    return [3]
"""

FLAT_TAP = """
import torch
import triton
import triton.language as tl


@triton.jit
def convt_kernel(x_ptr, w_ptr, y_ptr, H_in, W_in, H_out, W_out, K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < H_out * W_out
    oh = offs // W_out
    ow = offs % W_out
    base = oh * W_in + ow
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in range(K):
        row = kh * W_in
        for kw in range(K):
            tap = row + kw
            flat = base - tap
            ih = flat // W_in
            iw = flat % W_in
            ok = mask & (ih >= 0) & (ih < H_in) & (iw >= 0) & (iw < W_in)
            xv = tl.load(x_ptr + ih * W_in + iw, mask=ok, other=0.0)
            wv = tl.load(w_ptr + kh * K + kw)
            acc += xv * wv
    tl.store(y_ptr + offs, acc, mask=mask)


def convt(x, w):
    H_in, W_in = x.shape[-2:]
    K = w.shape[-1]
    H_out, W_out = H_in + K - 1, W_in + K - 1
    y = torch.empty((1, 1, H_out, W_out), dtype=x.dtype)
    BLOCK = 32
    convt_kernel[(triton.cdiv(H_out * W_out, BLOCK),)](x, w, y, H_in, W_in, H_out, W_out, K=K, BLOCK=BLOCK)
    return y
"""

HONEST = """
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, H, W, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < H * W
    r = offs // W
    c = offs % W
    start = tl.program_id(0) * W
    idx = start + c
    q = idx // W
    tl.store(y_ptr + r * W + c, tl.load(x_ptr + q * W + c, mask=mask), mask=mask)
"""


def _program(source: str, reference: str = TASK) -> Program:
    parsed = Program.parse(source, reference)
    assert parsed is not None
    return parsed


def test_a_tap_position_through_a_flattened_difference_is_un_flattened() -> None:
    made = edits(_program(FLAT_TAP), ["flat-tap"])
    assert [e.operator for e in made] == ["flat-tap"]
    (edit,) = made
    assert edit.label == "index-shift"
    assert "ih = oh - kh" in edit.source
    assert "iw = ow - kw" in edit.source
    assert edit.cue
    assert edit.grounded  # the kernel bounds the remainder by its divisor: `iw < W_in`


def test_an_unchecked_remainder_is_cued_but_not_grounded() -> None:
    source = FLAT_TAP.replace(" & (iw >= 0) & (iw < W_in)", "")
    (edit,) = edits(_program(source), ["flat-tap"])
    assert edit.cue and not edit.grounded


def test_a_sum_written_inline_is_split_too() -> None:
    source = FLAT_TAP.replace("flat = base - tap", "flat = (oh * W_in + ow) - (kh * W_in + kw)")
    (edit,) = edits(_program(source), ["flat-tap"])
    assert "ih = oh - kh" in edit.source and "iw = ow - kw" in edit.source


def test_honest_decompositions_get_no_edit() -> None:
    assert edits(_program(HONEST), ["flat-tap"]) == []
    # a name assigned twice is not expanded: its value at the division is not known
    again = "            flat = base - tap\n            flat = flat + 0\n"
    twice = FLAT_TAP.replace("            flat = base - tap\n", again)
    assert edits(_program(twice), ["flat-tap"]) == []


_SCRIPT = """
import sys
import torch
sys.path.insert(0, {folder!r})
import flat_tap_fixed, flat_tap_buggy
torch.manual_seed(0)
x = torch.rand(1, 1, 5, 6)
w = torch.rand(1, 1, 3, 3)
expected = torch.nn.functional.conv_transpose2d(x, w)
print(torch.allclose(flat_tap_fixed.convt(x, w), expected, atol=1e-5),
      torch.allclose(flat_tap_buggy.convt(x, w), expected, atol=1e-5))
"""


def test_the_edit_computes_the_transposed_convolution(tmp_path: Path) -> None:
    (edit,) = edits(_program(FLAT_TAP), ["flat-tap"])
    (tmp_path / "flat_tap_fixed.py").write_text(edit.source)
    (tmp_path / "flat_tap_buggy.py").write_text(FLAT_TAP)
    script = tmp_path / "check.py"
    script.write_text(_SCRIPT.format(folder=str(tmp_path)))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "False"]
