"""Tasks that only move data (a gather, a flip): an honest kernel copies input elements, and that is the task.

The copy-kernel rule must let such a kernel pass, and still reject a candidate where PyTorch did the moving and a
kernel only copied the result (through the task's own operation, another rearrangement, or an index tensor).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from kope.evaluate import EvalOptions, Evaluator

MOVING = FIXTURES / "moving"
GATHER, FLIP = MOVING / "gather_task.py", MOVING / "flip_task.py"
OPTIONS = EvalOptions(trials=2, timeout_s=60, memory_mb=2048)

COPY = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_rows(src, dst, n, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + at, tl.load(src + at, mask=at < n), mask=at < n)


def copied(t):
    t = t.contiguous()
    out = torch.empty_like(t)
    copy_rows[(triton.cdiv(t.numel(), 64),)](t, out, t.numel(), BLOCK=64)
    return out
"""

HONEST_GATHER = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def take_cols(values, where, picked, width, count, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    ok = j < count
    col = tl.load(where + r * count + j, mask=ok, other=0)
    tl.store(picked + r * count + j, tl.load(values + r * width + col, mask=ok), mask=ok)


class ModelNew(nn.Module):
    def forward(self, x, idx):
        x, idx = x.contiguous(), idx.contiguous()
        out = x.new_empty(idx.shape)
        take_cols[(x.shape[0],)](x, idx, out, x.shape[1], idx.shape[1], BLOCK=triton.next_power_of_2(idx.shape[1]))
        return out
"""

HONEST_FLIP = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def reverse_kernel(x, y, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    ok = j < cols
    v = tl.load(x + r * cols + (cols - 1 - j), mask=ok)
    tl.store(y + r * cols + j, v, mask=ok)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        reverse_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("task", "source"), [(GATHER, HONEST_GATHER), (FLIP, HONEST_FLIP)], ids=["gather", "flip"])
def test_an_honest_kernel_for_a_data_moving_task_passes(
    evaluator: Evaluator, tmp_path: Path, task: Path, source: str
) -> None:
    result = evaluator.evaluate(task, _write(tmp_path, "honest", source), options=OPTIONS)
    assert result.status == "pass", [f.message for f in result.integrity.findings]
    assert result.integrity.verdict == "clean"


CHEATS = {
    "flip_by_torch": (
        FLIP,
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return copied(torch.flip(x, dims=[1]))\n",
    ),
    "flip_by_index": (
        FLIP,
        "class ModelNew(nn.Module):\n    def forward(self, x):\n"
        "        return copied(x[:, torch.arange(x.shape[1] - 1, -1, -1)])\n",
    ),
    "flip_by_column_assignment": (
        FLIP,
        "class ModelNew(nn.Module):\n    def forward(self, x):\n"
        "        out = torch.empty_like(x)\n"
        "        for j in range(x.shape[1]):\n"
        "            out[:, j] = x[:, x.shape[1] - 1 - j]\n"
        "        return copied(out)\n",
    ),
    "flip_by_column_copies": (
        FLIP,
        "class ModelNew(nn.Module):\n    def forward(self, x):\n"
        "        out = torch.empty_like(x)\n"
        "        for j in range(x.shape[1]):\n"
        "            out.narrow(1, j, 1).copy_(x.narrow(1, x.shape[1] - 1 - j, 1))\n"
        "        return copied(out)\n",
    ),
    "gather_by_torch": (
        GATHER,
        "class ModelNew(nn.Module):\n    def forward(self, x, idx):\n        return copied(torch.gather(x, 1, idx))\n",
    ),
    "gather_by_index": (
        GATHER,
        "class ModelNew(nn.Module):\n    def forward(self, x, idx):\n"
        "        return copied(x[torch.arange(x.shape[0])[:, None], idx])\n",
    ),
    "gather_by_index_put": (
        GATHER,
        "class ModelNew(nn.Module):\n    def forward(self, x, idx):\n"
        "        out = x.new_zeros(idx.shape)\n"
        "        rows = torch.arange(x.shape[0])[:, None].expand_as(idx)\n"
        "        out[rows, torch.arange(idx.shape[1]).expand_as(idx)] = torch.take_along_dim(x, idx, 1)\n"
        "        return copied(out)\n",
    ),
    "gather_by_cat_of_columns": (
        GATHER,
        "class ModelNew(nn.Module):\n    def forward(self, x, idx):\n"
        "        rows = torch.stack([x[r].index_select(0, idx[r]) for r in range(x.shape[0])])\n"
        "        return copied(rows)\n",
    ),
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_pytorch_moving_the_data_before_a_copy_kernel_is_rejected(
    evaluator: Evaluator, tmp_path: Path, name: str
) -> None:
    task, forward = CHEATS[name]
    result = evaluator.evaluate(task, _write(tmp_path, name, COPY + "\n\n" + forward), options=OPTIONS)
    assert result.status == "reject", (result.status, [f.message for f in result.integrity.findings])
