"""Indexing (kope.bugs.indexing): a flat index decoded into coordinates in no one order (`index-decode`), a
remainder taken whole as a coordinate (`remainder-coordinate`), an address that leaves a coordinate out
(`address-coordinate`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, verdicts

from kope.bugs.edit import Program, edits
from kope.evaluate import Evaluator

INDEXING = FIXTURES / "indexing"


def _decodes(body: str) -> list[str]:
    text = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x, A, B, C, BLOCK: tl.constexpr):\n"
    text += "    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    text += "".join(f"    {line}\n" for line in body.splitlines())
    program = Program.parse(text)
    assert program is not None
    return [e.description for e in edits(program, ["index-decode"])]


def test_a_decode_that_divides_a_coordinate_by_its_own_size_is_put_in_one_order(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = INDEXING / "permute_task.py"
    program = Program.parse((INDEXING / "permute_decode.py").read_text(), task.read_text())
    assert program is not None
    (made,) = edits(program, ["index-decode"])
    assert made.grounded
    assert "b = (i // A) % B" in made.source and "c = i // (A * B)" in made.source and "a = i % A" in made.source
    fixed = Program.parse(made.source)
    assert fixed is not None and edits(fixed, ["index-decode"]) == []
    assert verdicts(evaluator, task, [program.text, made.source], tmp_path) == ["fail", "pass"]


@pytest.mark.parametrize(
    "body",
    [
        "a = i % A\nb = (i // A) % B\nc = i // (A * B)",  # innermost first
        "c = i // (B * A)\nb = (i // A) % B\na = i % A",  # outermost first, whole products
        "a = i % A\nt = i // A\nb = t % B\nc = t // B",  # through a running quotient
        "a = i % A\nbc = i // A",  # the outer dimensions together
        "x0 = i % 10240\nx1 = i // 10240 % 32\nx2 = i // 10240",  # numbers: one may be several sizes' product
        "a = i % A\nb = i % B",  # two indices of one flat position, not a decode
    ],
)
def test_decodes_in_one_order_are_left(body: str) -> None:
    assert _decodes(body) == []


def test_a_coordinate_divided_by_another_size_than_the_one_inside_it_is_divided_by_that_one() -> None:
    """The second coordinate divided by the third's size: by the first's; two coordinates as deep (no order to
    read) get no edit."""
    (made,) = _decodes("a = i % A\nb = (i // C) % B\nc = (i // (A * B)) % C\nd = i // (A * B * C)")
    assert made.endswith("(i // A) % B")
    assert _decodes("a = i % A\nb = (i // A) % B\nc = (i // B) % C") == []


REMAINDER = (
    (INDEXING / "permute_decode.py")
    .read_text()
    .replace(
        "    t = i // (B * A)\n    a = i % A\n    b = t % B\n    t = t // B\n    c = t\n",
        "    c = i // (B * A)\n    rem = i % (B * A)\n    b = rem // A\n    a = rem\n",
    )
)
"""The permutation decoding its flat index through a remainder whose innermost coordinate is the whole remainder."""


def test_a_remainder_taken_whole_beside_the_coordinate_that_divides_it_is_taken_modulo_that_size(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = INDEXING / "permute_task.py"
    program = Program.parse(REMAINDER, task.read_text())
    assert program is not None and "    a = rem\n" in REMAINDER
    (made,) = edits(program, ["remainder-coordinate", "index-decode"])
    assert made.operator == "remainder-coordinate" and made.grounded  # `a` and `b` in one address
    assert "    a = rem % A\n" in made.source
    fixed = Program.parse(made.source)
    assert fixed is not None and edits(fixed, ["remainder-coordinate"]) == []
    assert verdicts(evaluator, task, [program.text, made.source], tmp_path) == ["fail", "pass"]


@pytest.mark.parametrize(
    "body",
    [
        "r = i % (A * B)\nb = r // A\na = r % A",  # the coordinate inside taken modulo its size
        "r = i % (A * B)\na = r",  # never split: the remainder is a coordinate of its own
        "r = i % (A * B)\nb = r // A\nq = r // B\na = r",  # split by two sizes: no one reading
        "r = i // A\nb = r // B\na = r",  # a quotient, not a remainder
    ],
)
def test_remainders_not_taken_whole_beside_one_split_are_left(body: str) -> None:
    text = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x, A, B, BLOCK: tl.constexpr):\n"
    text += "    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    text += "".join(f"    {line}\n" for line in body.splitlines())
    program = Program.parse(text)
    assert program is not None and edits(program, ["remainder-coordinate"]) == []


SKIPPED = (INDEXING / "permute_rows.py").read_text().replace("row = (c * B + b) * A", "row = (c * B) * A")
"""The rows' permutation whose store leaves out the coordinate `b`: every `b` of a program's block writes row 0."""


def test_an_address_whose_strides_skip_a_size_gets_the_coordinate_bounded_by_it(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    task = INDEXING / "permute_task.py"
    program = Program.parse(SKIPPED, task.read_text())
    assert program is not None and (INDEXING / "permute_rows.py").read_text() != SKIPPED
    (made,) = edits(program, ["address-coordinate"])
    assert made.grounded  # the stored value depends on `b`
    assert "tl.store(out_ptr + row + a + b * (A), value, mask=mask)" in made.source
    fixed = Program.parse(made.source)
    assert fixed is not None and edits(fixed, ["address-coordinate"]) == []
    right = Program.parse((INDEXING / "permute_rows.py").read_text())
    assert right is not None and edits(right, ["address-coordinate"]) == []
    assert verdicts(evaluator, task, [program.text, made.source], tmp_path) == ["fail", "pass"]


@pytest.mark.parametrize(
    "body",
    [
        # a flat index bounded by the sizes its stride steps over: `s` is `(d, h, w)` whole
        "s = offs\nh = (s // W) % H\nmask = s < D * H * W\ntl.store(o + n * D * H * W + s, v, mask=mask)",
        # strides passed by the host: no chain of sizes to read
        "h = offs // W\nw = offs % W\nmask = h < H\ntl.store(o + n * sn + w * sw, v, mask=mask)",
        # the coordinate is read, through a name bound to it
        "h = offs // W\nw = offs % W\nmask = h < H\nrow = n * H + h\ntl.store(o + row * W + w, v, mask=mask)",
        # no size skipped
        "h = offs // W\nw = offs % W\nmask = h < H\ntl.store(o + (n * H + h) * W + w, v, mask=mask)",
    ],
)
def test_addresses_whose_strides_skip_nothing_a_coordinate_covers_are_left(body: str) -> None:
    text = "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
    text += "def k(o, v, n, D, H, W, sn, sw, BLOCK: tl.constexpr):\n"
    text += "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    text += "".join(f"    {line}\n" for line in body.splitlines())
    program = Program.parse(text)
    assert program is not None and edits(program, ["address-coordinate"]) == []


ROW_SUM_TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=1)


def get_inputs():
    return [torch.rand(4, 300)]


def get_init_inputs():
    return []
"""

OVERLAPPING_LANES = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64, "VEC": 4}), triton.Config({"BLOCK": 32, "VEC": 2})], key=["n"])
@triton.jit
def row_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr, VEC: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        wide = cols[:, None] + tl.arange(0, VEC)[None, :]
        total += tl.sum(tl.load(x_ptr + row * n + wide, mask=wide < n, other=0.0))
    tl.store(out_ptr + row, total)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(x.shape[0], device=x.device)
        row_sum[(x.shape[0],)](x, out, x.shape[1])
        return out
"""


def test_vector_lanes_that_overlap_the_next_lane_are_narrowed_to_one(evaluator: Evaluator, tmp_path: Path) -> None:
    """`cols[:, None] + tl.arange(0, VEC)[None, :]` where `cols` steps by one element: every element is summed up
    to VEC times. VEC -> 1 in every config (grounded): wrong before, right after, through the real evaluator."""
    program = Program.parse(OVERLAPPING_LANES)
    assert program is not None
    (edit,) = edits(program, ["vector-lanes"])
    assert edit.grounded and '"VEC": 1}' in edit.source and '"VEC": 4' not in edit.source
    task = tmp_path / "row_sum.py"
    task.write_text(ROW_SUM_TASK)
    assert verdicts(evaluator, task, [OVERLAPPING_LANES, edit.source], tmp_path) == ["fail", "pass"]


def test_vector_lanes_scaled_by_their_width_are_left() -> None:
    """`cols * VEC` lanes (or a block start stepped by BLOCK * VEC) tile without overlap: no edit."""
    scaled = OVERLAPPING_LANES.replace("wide = cols[:, None]", "wide = cols[:, None] * VEC")
    program = Program.parse(scaled)
    assert program is not None and edits(program, ["vector-lanes"]) == []
