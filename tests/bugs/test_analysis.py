"""The static facts the cues and recipes share: launches, offsets, pointers, padding."""

from __future__ import annotations

import ast

from kope.bugs.analysis import DIRTY, Dataflow, base_pointer, is_float_expr, padding_leaks
from kope.ops import get_op
from kope.source import ParsedSource


def _program(source: str) -> Dataflow:
    parsed = ParsedSource.parse(source)
    assert parsed is not None
    return Dataflow(parsed)


def program(op: str) -> Dataflow:
    return _program(get_op(op).kernel_path.read_text())


def test_launches_map_arguments_to_parameters_and_read_the_grid() -> None:
    found = program("bias_add")
    (launch,) = found.launches
    assert ast.unparse(launch.args["stride_x"]) == "x.stride(0)"
    assert ast.unparse(launch.args["BLOCK_N"]) == "block_n"
    assert [ast.unparse(axis) for axis in launch.grid or []] == [
        "triton.cdiv(n_rows, block_m)",
        "triton.cdiv(n_cols, block_n)",
    ]


def test_kernel_facts() -> None:
    kernel = program("softmax").kernels["_softmax_kernel"]
    assert {"cols", "offs"} <= kernel.aranges and "x" not in kernel.aranges
    assert {"mask"} <= kernel.masks
    assert "row" in kernel.pids
    assert {"x", "e", "y"} <= kernel.floats
    load = next(n for n in ast.walk(kernel.node) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.load")
    assert base_pointer(load.args[0], kernel) == "x_ptr"


def test_float_inference_ignores_conditions() -> None:
    assert is_float_expr(ast.parse("tl.where(a > b, i, j)", mode="eval").body, {"a", "b"}) is False
    assert is_float_expr(ast.parse("x / n", mode="eval").body, set()) is True


def test_padding_follows_arithmetic_and_where() -> None:
    source = """
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + cols, mask=mask, other=0.0)
    total = tl.sum(x * x, axis=0)
    mean = tl.sum(x, axis=0) / n
    centred = x - mean
    largest = tl.max(x, axis=0)
    safe = tl.where(mask, x - mean, 0.0)
    tl.store(out_ptr, total + tl.sum(centred, axis=0) + largest + tl.sum(safe, axis=0))
"""
    kernel = _program(source).kernels["k"]
    leaks = {
        (leak.reduction, leak.padding if leak.padding == DIRTY else float(leak.padding))
        for leak in padding_leaks(kernel)
    }
    assert leaks == {("sum", DIRTY), ("max", 0.0)}


def test_padding_is_forgotten_across_loop_iterations() -> None:
    """The suite's online softmax: lanes of the running max start from a full first block."""
    assert padding_leaks(program("softmax").kernels["_softmax_kernel"]) == []


def test_reading_a_kernel_leaves_the_positions_of_its_source_as_they_are() -> None:
    """An augmented write to a subscript (`acc[i] += v`) was recorded by moving `v`'s position onto the statement's:
    every edit spliced at `v` afterwards replaced the whole statement (a `block-index` edit that did not parse)."""
    text = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, n, B: tl.constexpr):\n"
        "    acc = tl.zeros((B,), dtype=tl.float32)\n    for i in range(B):\n        acc[i] += tl.load(x_ptr + i)\n"
        "    total = 0.0\n    total += tl.sum(acc, axis=0)\n"
    )
    parsed = ParsedSource.parse(text)
    assert parsed is not None
    before = [(n.lineno, n.col_offset, n.end_col_offset) for n in ast.walk(parsed.tree) if isinstance(n, ast.expr)]
    Dataflow(parsed).kernel_of(parsed.kernels[0])
    after = [(n.lineno, n.col_offset, n.end_col_offset) for n in ast.walk(parsed.tree) if isinstance(n, ast.expr)]
    assert after == before
