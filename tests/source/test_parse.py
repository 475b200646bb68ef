"""The one kernel rule, launches and call names, on the decorator and import styles people write."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

import kope.source
from kope.source import ParsedSource, call_name, dotted, names_in

BODY = "def k(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr, tl.load(x_ptr))\n"


def _kernels(header: str) -> list[str]:
    parsed = ParsedSource.parse(header + BODY)
    assert parsed is not None
    return [k.name for k in parsed.kernels]


@pytest.mark.parametrize(
    "header",
    [
        "import triton\nimport triton.language as tl\n@triton.jit\n",
        "import triton as tr\nimport triton.language as tl\n@tr.jit\n",
        "from triton import jit\nimport triton.language as tl\n@jit\n",
        "from triton import jit as J\nimport triton.language as tl\n@J\n",
        "import triton.language as tl\n@tl.jit\n",
        "import triton\n@triton.jit(do_not_specialize=['n'])\n",
        "import triton\n@triton.autotune(configs=[triton.Config({'BLOCK': 64})], key=['n'])\n"
        "@triton.heuristics({'EVEN': lambda a: True})\n@triton.jit\n",
        "import triton\njit = triton.jit\n@jit\n",
        "@triton.jit\n",  # a snippet without imports: the conventional meaning
    ],
)
def test_every_kernel_style_is_a_kernel(header: str) -> None:
    assert _kernels(header) == ["k"]


@pytest.mark.parametrize(
    "header",
    [
        "import torch\n@torch.jit.script\n",
        "import torch as tl\n@tl.jit\n",
        "def jit(f):\n    return f\n@jit\n",
        "import numba\n@numba.jit\n",
        "import triton\n@triton.autotune(configs=[], key=[])\n",
        "import functools\n@functools.lru_cache\n",
    ],
)
def test_other_decorators_are_not_kernels(header: str) -> None:
    assert _kernels(header) == []


def test_launches_hosts_and_both_tree_kinds() -> None:
    text = (
        "import triton\nimport triton.language as tl\n@triton.jit\n"
        + BODY
        + "def launch(x):\n    k[(1,)](x, BLOCK=16)\n    k.run(x, grid=(2,), BLOCK=16)\n    k.warmup(x)\n"
        + "    cache[0](x)\n"
    )
    parsed = ParsedSource.parse(text)
    assert parsed is not None and ParsedSource.parse("def (:") is None
    sites = sorted(parsed.launches, key=lambda s: s.call.lineno)
    assert [ast.unparse(s.grid) if s.grid else None for s in sites] == ["(1,)", "(2,)"]
    assert all(s.kernel.name == "k" and s.host is not None and s.host.name == "launch" for s in sites)
    assert {type(n).__name__ for n in parsed.host_nodes()} >= {"Call"} and "tl.store(x_ptr, tl.load(x_ptr))" not in {
        ast.unparse(n) for n in parsed.host_nodes() if isinstance(n, ast.expr)
    }
    module = parsed.cst_module
    functions = [n for n in module.body if isinstance(n, cst.FunctionDef)]
    assert [parsed.is_kernel(f) for f in functions] == [True, False]
    call = ast.parse("tl.load(x).to(tl.float32)").body[0].value  # type: ignore[attr-defined]
    assert (call_name(call), call_name(call, last=True), call_name(call.func.value)) == ("", "to", "tl.load")
    cst_call = cst.parse_expression("tl.load(x)")
    assert (call_name(cst_call), call_name(cst_call, last=True), dotted(cst_call)) == ("tl.load", "load", "")
    assert call_name(ast.parse("k[g](x)").body[0].value) == "" and call_name(ast.Name("x")) == ""  # type: ignore[attr-defined]


def test_public_names() -> None:
    assert sorted(kope.source.__all__) == ["LaunchSite", "ParsedSource", "call_name", "dotted", "names_in"]


def test_names_in_finds_every_name_at_any_depth() -> None:
    expr = ast.parse("offs + tl.arange(0, BLOCK) * stride[n]", mode="eval").body
    assert names_in(expr) == {"offs", "tl", "BLOCK", "stride", "n"}
    assert names_in(None) == set()
