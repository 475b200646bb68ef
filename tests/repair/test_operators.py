"""Each repair operator on a small source: the edit it makes and the sites it finds."""

from __future__ import annotations

import textwrap

import pytest

from kope.repair.operators import OPERATORS, Edit, Program, edits

KERNEL = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _row_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_xc, stride_out, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * stride_x
        cols = tl.arange(0, BLOCK)
        mask = cols <= n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols - BLOCK, BLOCK):
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            x = tl.load(x_row + start + cols + 1, mask=mask, other=0.0)
            acc += tl.exp(x) * 0.04715
        total = tl.max(acc, axis=0)
        tl.store(out_ptr + cols, tl.cumsum(acc, axis=0) * 2.0, mask=mask)
        tl.store(out_ptr + row, total)


    class ModelNew(torch.nn.Module):
        def forward(self, x):
            n_rows, n_cols = x.shape
            out = torch.empty_like(x)
            grid = (n_rows // 4, 1)
            _row_kernel[grid](x, out, n_cols, x.stride(0), x.stride(1), out.stride(0), BLOCK=128)
            return out
""")

REFERENCE = "import torch\n\ndef f(x):\n    return torch.tanh(x * 0.044715) * 0.5\n"


def of(name: str, source: str = KERNEL, reference: str = REFERENCE) -> list[Edit]:
    program = Program.parse(source, reference)
    assert program is not None
    return edits(program, [name])


def changed(edit: Edit, source: str = KERNEL) -> tuple[str, str]:
    """The first line that differs: (before, after), stripped."""
    for a, b in zip(source.splitlines(), edit.source.splitlines(), strict=False):
        if a != b:
            return a.strip(), b.strip()
    raise AssertionError("no line changed")


def test_every_operator_has_a_taxonomy_id_and_yields_parsable_distinct_edits() -> None:
    program = Program.parse(KERNEL, REFERENCE)
    assert program is not None
    found = edits(program)
    assert {e.operator for e in found} >= {"compare-flip", "floor-to-cdiv", "loop-bound", "stride-argument", "constant"}
    assert len({e.source for e in found}) == len(found)
    for name, (label, _) in OPERATORS.items():
        assert label and name


def test_unparsable_source_has_no_program() -> None:
    assert Program.parse("def (:\n") is None


def test_compare_flip_turns_the_mask_bound_strict() -> None:
    (edit,) = of("compare-flip")
    assert edit.label == "mask-off-by-one" and edit.line == 12
    assert changed(edit) == ("mask = cols <= n_cols", "mask = cols < n_cols")


def test_floor_to_cdiv_in_the_grid() -> None:
    (edit,) = of("floor-to-cdiv")
    assert edit.label == "grid-too-small"
    assert changed(edit)[1] == "grid = (triton.cdiv(n_rows, 4), 1)"


def test_floor_to_cdiv_in_a_kernel_uses_tl_cdiv() -> None:
    source = KERNEL.replace("range(0, n_cols - BLOCK, BLOCK)", "range(0, n_cols // BLOCK)")
    texts = [changed(e, source)[1] for e in of("floor-to-cdiv", source)]
    assert "for start in range(0, tl.cdiv(n_cols, BLOCK)):" in texts


def test_loop_bound_drops_the_short_stop_and_resets_the_start() -> None:
    texts = {changed(e)[1] for e in of("loop-bound")}
    assert "for start in range(0, n_cols, BLOCK):" in texts
    assert "for start in range(0, n_cols - BLOCK + BLOCK, BLOCK):" in texts


def test_stride_argument_replaces_and_swaps_strides_of_the_same_tensor() -> None:
    found = of("stride-argument")
    texts = {changed(e)[1] for e in found}
    launch = "_row_kernel[grid](x, out, n_cols, {}, {}, {}, BLOCK=128)"
    assert launch.format("x.stride(1)", "x.stride(0)", "out.stride(0)") in texts  # swapped
    assert launch.format("out.stride(0)", "x.stride(1)", "out.stride(0)") in texts  # another tensor's stride
    assert launch.format("x.stride(0)", "x.stride(1)", "out.stride(1)") in texts  # the tensor's other stride
    assert all(e.label == "wrong-stride" and e.line == 28 for e in found)


def test_stride_name_and_swap_in_kernel_addresses() -> None:
    names = {changed(e)[1] for e in of("stride-name")}
    assert "x_row = x_ptr + row * stride_xc" in names
    source = KERNEL.replace("x_row = x_ptr + row * stride_x", "x_row = x_ptr + row * stride_xc + cols * stride_x")
    (swap,) = of("stride-swap", source)
    assert changed(swap, source)[1] == "x_row = x_ptr + row * stride_x + cols * stride_xc"


def test_stride_factor_scales_an_unscaled_term_by_an_unused_stride() -> None:
    source = KERNEL.replace("x_row = x_ptr + row * stride_x", "x_row = x_ptr + row * stride_x + cols")
    texts = {changed(e, source)[1] for e in of("stride-factor", source)}
    assert "x_row = x_ptr + row * stride_x + (cols) * stride_xc" in texts


def test_offset_term_adds_a_missing_program_offset_and_drops_one() -> None:
    source = KERNEL.replace("x_row = x_ptr + row * stride_x", "x_row = x_ptr")
    found = of("offset-term", source)
    texts = {changed(e, source)[1] for e in found}
    assert "x_row = x_ptr + row * stride_x" in texts
    assert all(e.label == "missing-batch-offset" for e in found)
    dropped = {changed(e)[1] for e in of("offset-term") if e.description.startswith("drop")}
    assert "x_row = (x_ptr)" in dropped


def test_index_shift_removes_a_small_constant_from_an_address() -> None:
    (edit,) = of("index-shift")
    assert changed(edit)[1] == "x = tl.load(x_row + start + cols, mask=mask, other=0.0)"


def test_other_identity_offers_the_identity_of_the_reduction_it_feeds() -> None:
    found = of("other-identity")
    assert changed(found[0])[1].split("other=")[1] == "-float('inf'))"  # acc feeds tl.max
    assert {e.label for e in found} == {"padding-in-reduction"}


def test_reduction_init_changes_the_initial_value() -> None:
    texts = {changed(e)[1] for e in of("reduction-init")}
    assert "acc = tl.full([BLOCK], -float('inf'), dtype=tl.float32)" in texts


def test_accumulator_move_takes_the_initialisation_out_of_the_loop() -> None:
    found = [e for e in of("accumulator-move") if "before the loop" in e.description]
    assert found and found[0].line == 15
    lines = found[0].source.splitlines()
    loop = next(i for i, line in enumerate(lines) if line.strip().startswith("for start"))
    assert lines[loop - 1].strip() == "acc = tl.zeros([BLOCK], dtype=tl.float32)"
    assert "acc = tl.zeros" not in lines[loop + 1]


def test_accumulator_move_puts_an_initialisation_into_the_loop() -> None:
    source = KERNEL.replace("BLOCK):\n        acc = tl.zeros([BLOCK], dtype=tl.float32)\n", "BLOCK):\n")
    (edit,) = [e for e in of("accumulator-move", source) if "into the loop" in e.description]
    lines = edit.source.splitlines()
    loop = next(i for i, line in enumerate(lines) if line.strip().startswith("for start"))
    assert lines[loop + 1] == "        acc = tl.zeros([BLOCK], dtype=tl.float32)"
    assert lines[loop - 1].strip() == "mask = cols <= n_cols"


def test_scan_kind_makes_an_inclusive_scan_exclusive_and_back() -> None:
    texts = {changed(e)[1] for e in of("scan-kind")}
    assert "tl.store(out_ptr + cols, (tl.cumsum(acc, axis=0) - acc) * 2.0, mask=mask)" in texts
    source = KERNEL.replace("tl.cumsum(acc, axis=0) * 2.0", "(tl.cumsum(acc, axis=0) - acc)")
    back = {changed(e, source)[1] for e in of("scan-kind", source)}
    assert "tl.store(out_ptr + cols, (tl.cumsum(acc, axis=0)), mask=mask)" in back


def test_constant_offers_the_reference_constant_first_then_typos() -> None:
    found = [e for e in of("constant") if "0.04715" in e.description]
    texts = [changed(e)[1] for e in found]
    assert texts[0] == "acc += tl.exp(x) * 0.044715"
    assert "acc += tl.exp(x) * 0.4715" in texts  # times ten
    assert "acc += tl.exp(x) * 0.04175" in texts  # adjacent digits swapped


def test_missing_factor_multiplies_a_stored_value_by_an_unused_reference_constant() -> None:
    texts = {changed(e)[1] for e in of("missing-factor")}
    assert "tl.store(out_ptr + row, (total) * 0.5)" in texts


def test_drop_operation_removes_an_extra_operation_before_the_store() -> None:
    texts = {changed(e)[1] for e in of("drop-operation")}
    assert "tl.store(out_ptr + cols, tl.cumsum(acc, axis=0), mask=mask)" in texts


def test_add_mask_gives_an_unmasked_access_a_mask_of_the_kernel() -> None:
    (edit,) = of("add-mask")
    assert changed(edit)[1] == "tl.store(out_ptr + row, total, mask=mask)"


def test_max_subtraction_subtracts_a_maximum_inside_exp() -> None:
    (edit,) = of("max-subtraction")
    assert changed(edit)[1] == "acc += tl.exp(x - total) * 0.04715"


def test_broadcast_swap_and_grid_axis() -> None:
    source = KERNEL.replace("x_row + start + cols + 1", "x_row + start + cols[:, None] + 1")
    (swap,) = of("broadcast-swap", source)
    assert "cols[None, :]" in changed(swap, source)[1]
    source = KERNEL.replace("grid = (n_rows // 4, 1)", "grid = (1, triton.cdiv(n_cols, block_n))").replace(
        "out = torch.empty_like(x)", "out = torch.empty_like(x)\n        block_n = 128"
    )
    texts = {changed(e, source)[1] for e in of("grid-axis", source)}
    assert "grid = (triton.cdiv(n_rows, block_n), triton.cdiv(n_cols, block_n))" in texts


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_no_operator_touches_a_kernel_without_sites(name: str) -> None:
    assert of(name, "import torch\n\nx = 1\n") == []
