"""The launch search's tunables in the styles people write, and one offline optimize run on local block sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kope.agents.launch import apply_config, find_knobs, scan
from kope.agents.optimize import Node, OptimizeConfig, OptimizeLoop, Search, _Open
from kope.agents.proposers import Frontier, LaunchSearch
from kope.cases.task import build_cases, load_task
from kope.evaluate import EvalOptions, Evaluator
from kope.ops import get_op

KERNEL = """import torch
import torch.nn as nn
import triton
import triton.language as tl
{module}

{decorators}
def _relu2d(x_ptr, out_ptr, rows, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offs = r[:, None] * cols + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.where(x < 0, 0.0, x), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
{body}
        return out
"""
LOCAL = """        BR, BC = 4, 64
        grid = (triton.cdiv(rows, BR), triton.cdiv(cols, BC))
        _relu2d[grid](x, out, rows, cols, BLOCK_R=BR, BLOCK_C=BC)"""


def _kernel(body: str, module: str = "", decorators: str = "@triton.jit") -> str:
    return KERNEL.format(body=body, module=module, decorators=decorators)


def _knobs(source: str) -> dict[str, int | None]:
    return {k.id: k.value for k in find_knobs(source) if not k.id.startswith("kw:num_")}


def test_tunables_in_every_style() -> None:
    local = _kernel(LOCAL)
    assert _knobs(local) == {"var:BR": 4, "var:BC": 64}
    assert "BR, BC = 8, 32" in apply_config(local, {"var:BR": 8, "var:BC": 32})
    literals = "        _relu2d[(triton.cdiv(rows, 4), triton.cdiv(cols, 64))](x, out, rows, cols, 4, BLOCK_C=64)"
    assert _knobs(_kernel(literals)) == {"kw:BLOCK_R": 4, "kw:BLOCK_C": 64}, "positional constexpr literals too"
    constants = "        _relu2d[(triton.cdiv(rows, BR), triton.cdiv(cols, BC))](x, out, rows, cols, BR, BC)"
    module = _kernel(constants, module="BR, BC = 4, 64")
    assert _knobs(module) == {"const:BR": 4, "const:BC": 64}
    assert "BR, BC = 2, 128" in apply_config(module, {"const:BR": 2, "const:BC": 128})
    meta = """        block = 64
        grid = lambda META: (triton.cdiv(rows, META["BLOCK_R"]), triton.cdiv(cols, META["BLOCK_C"]))
        _relu2d[grid](x, out, rows, cols, BLOCK_R=2, BLOCK_C=block)"""
    assert _knobs(_kernel(meta)) == {"kw:BLOCK_R": 2, "var:block": 64}
    chained = "        BR = BC = 16\n" + constants[:]
    assert _knobs(_kernel(chained)) == {}, "one literal behind two names is not two knobs"


def test_autotune_owns_its_configs() -> None:
    tuned = _kernel(
        """        grid = lambda META: (triton.cdiv(rows, META["BLOCK_R"]), triton.cdiv(cols, META["BLOCK_C"]))
        _relu2d[grid](x, out, rows, cols)""",
        decorators='@triton.autotune(configs=[triton.Config({"BLOCK_R": 4, "BLOCK_C": 64}, num_warps=2), '
        'triton.Config({"BLOCK_R": 8, "BLOCK_C": 32})], key=["rows"])\n@triton.jit',
    )
    heuristics = scan(_kernel(LOCAL, decorators='@triton.heuristics({"EVEN": lambda a: True})\n@triton.jit'))
    assert [k.id for k in heuristics.knobs][:2] == ["var:BR", "var:BC"], "heuristics own only their own names"
    assert heuristics.notes == ["_relu2d: EVEN chosen by @triton.heuristics; the launch search leaves them to it"]
    found = scan(tuned)
    assert found.knobs == [], "no num_warps either: passing it would conflict with the configs"
    assert found.notes == [
        "_relu2d: BLOCK_R, BLOCK_C, num_warps chosen by @triton.autotune over its 2 configs; "
        "the launch search leaves them to it"
    ]
    search = LaunchSearch(tuned, interpreted=True)
    root = _Open(node=Node(index=0, kind="start", time_ms=1.0), source=tuned, config={})
    state = Search(task=load_task(get_op("relu").task_path), start=root)
    told = search.propose(Frontier(current=root, search=state))
    assert told is not None and told.kind == "no-edit" and told.source is None and "@triton.autotune" in told.note
    assert search.propose(Frontier(current=root, search=state)) is None, "said once, then the search is exhausted"
    aliased = scan(
        _kernel(
            '        tuned = triton.autotune(configs=[triton.Config({"BLOCK_R": 4})], key=["rows"])(_relu2d)'
            "\n        tuned[(rows, cols)](x, out, rows, cols)"
        )
    )
    assert aliased.knobs == [] and aliased.notes == [
        "_relu2d: launched through `tuned`, which wraps it; the launch search leaves it"
    ], "an autotune applied by a call owns its configs too"


@pytest.mark.slow
def test_offline_optimize_searches_local_block_sizes(evaluator: Evaluator, tmp_path: Path) -> None:
    candidate = tmp_path / "relu2d.py"
    candidate.write_text(_kernel(LOCAL))
    task = load_task(get_op("relu").task_path)
    options = EvalOptions(trials=1, timing=True, timing_budget_ms=5, timeout_s=60, memory_mb=2048)
    loop = OptimizeLoop(None, evaluator, config=OptimizeConfig(iterations=1, options=options))
    report = loop.run(task, candidate, tmp_path / "out.py", cases=build_cases(task, [{"batch_size": 3, "dim": 70}]))
    assert report.stop_reason == "iteration-limit", "the search found parameters to try"
    assert [n.kind for n in report.trajectory] == ["start", "launch-config"]
    assert report.trajectory[1].status == "pass" and "BR 4→8" in report.trajectory[1].decision
