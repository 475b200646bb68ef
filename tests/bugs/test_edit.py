"""Each repair operator on a small source: the edit it makes and the sites it finds."""

from __future__ import annotations

import textwrap

import pytest

from kope.bugs.edit import OPERATORS, Edit, Program, edits

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


RANGE = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _least(a, b):
        return tl.minimum(a, b)

    @triton.jit
    def _span(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        i = tl.arange(0, BLOCK)
        keep = i < n
        v = tl.load(x_ptr + r * n + i, mask=keep, other=0.0)
        top = tl.max(tl.where(keep, v, -float("inf")), axis=0)
        low = tl.where(keep, v, 0.0)
        bottom = tl.reduce(low, 0, _least)
        scaled = tl.where(keep, v * 2.0, 0)
        tl.store(o_ptr + r, top - bottom + tl.sum(scaled, axis=0))
""")


def test_other_identity_sets_a_where_padding_to_the_identity_of_the_reduction_it_feeds() -> None:
    found = [e for e in of("other-identity", RANGE, "") if "`tl.where` padding" in e.description]
    # `low` feeds a tl.reduce whose combine takes the minimum: +inf; `scaled` feeds a sum and pads with 0 already;
    # the max's padding is inline (no name feeds the max) and stays
    assert [changed(e, RANGE)[1] for e in found] == ["low = tl.where(keep, v, float('inf'))"]


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


# -- the operators issue 13's hand-written near misses asked for ----------------------------------------------

TWO_D = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scan(x):
        return tl.cumsum(x, axis=1)


    @triton.jit
    def tile_kernel(src, dst, n_rows, n_cols, s_r, s_c, d_r, d_c, BM: tl.constexpr, BN: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rows = pid_m * BM + tl.arange(0, BM)
        cols = pid_m * BN + tl.arange(0, BN)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_rows)
        a = tl.load(src + rows[:, None] * s_r + cols[None, :] * s_c, mask=mask, other=0.0)
        b = tl.load(src + rows[:, None] * s_r + cols[None, :] * s_c, mask=mask, other=0.0)
        col = cols // n_cols
        tl.store(dst + rows[:, None] * d_r + cols[None, :] * d_c, _scan(a + b), mask=mask)


    class ModelNew(torch.nn.Module):
        def forward(self, x):
            M, N = x.shape
            out = torch.empty_like(x)
            grid = (triton.cdiv(N, 16), triton.cdiv(M, 16))
            tile_kernel[grid](x, out, M, N, *x.stride(), *out.stride(), BM=16, BN=16)
            return out
""")


def test_strides_are_known_from_the_launch_even_when_spread_from_t_stride() -> None:
    program = Program.parse(TWO_D)
    assert program is not None
    kernel = program.parsed.kernel_names["tile_kernel"]
    assert program.strides(kernel) == ["s_r", "s_c", "d_r", "d_c"]
    assert program.scalars(kernel) == ["n_rows", "n_cols"]


def test_compare_operand_gives_a_mask_the_other_bound_and_cues_one_bound_for_two_axes() -> None:
    found = of("compare-operand", TWO_D)
    fixed = "mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)"
    right = [e for e in found if changed(e, TWO_D)[1] == fixed]
    assert right and right[0].label == "missing-mask" and "both compared with `n_rows`" in right[0].cue


def test_grid_swap_exchanges_the_axes_of_a_named_grid() -> None:
    (edit,) = of("grid-swap", TWO_D)
    assert changed(edit, TWO_D)[1] == "grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))"
    lam = TWO_D.replace("grid = (triton.cdiv(N, 16), triton.cdiv(M, 16))", "grid = lambda META: (N, M)")
    assert [changed(e, lam)[1] for e in of("grid-swap", lam)] == ["grid = lambda META: (M, N)"]


def test_pid_swap_gives_the_column_block_its_own_program_id() -> None:
    texts = {changed(e, TWO_D)[1] for e in of("pid-swap", TWO_D)}
    assert "cols = pid_n * BN + tl.arange(0, BN)" in texts


def test_floor_mod_turns_a_row_index_into_a_column_index() -> None:
    (edit,) = of("floor-mod", TWO_D)
    assert changed(edit, TWO_D)[1] == "col = cols % n_cols" and edit.label == "broadcast-error"


def test_sibling_offset_moves_one_of_two_loads_of_one_address_and_cues_it() -> None:
    found = of("sibling-offset", TWO_D)
    texts = {changed(e, TWO_D)[1] for e in found}
    assert "b = tl.load(src + rows[:, None] * s_r + cols[None, :] * s_c + n_cols, mask=mask, other=0.0)" in texts
    assert all("two loads read the same address" in e.cue for e in found)


def test_upcast_converts_a_load_to_float32() -> None:
    texts = {changed(e, TWO_D)[1] for e in of("upcast", TWO_D)}
    assert "a = tl.load(src + rows[:, None] * s_r + cols[None, :] * s_c, mask=mask, other=0.0).to(tl.float32)" in texts


CONV = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def conv_kernel(x_ptr, w_ptr, y_ptr, L, KS, sxl, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        carry = 0.0
        for k in range(0, KS):
            carry = 0.0
            w = tl.load(w_ptr + k)
            x = tl.load(x_ptr + offs * sxl, mask=offs < L, other=0.0)
            acc += w * x
            carry += tl.sum(x, axis=0)
            best = tl.argmax(x, axis=0)
        tl.store(y_ptr + offs, acc + carry, mask=offs < L)
""")


def test_loop_offset_gives_a_loop_invariant_load_the_loop_variable() -> None:
    found = of("loop-offset", CONV)
    texts = {changed(e, CONV)[1] for e in found}
    assert "x = tl.load(x_ptr + (offs + k) * sxl, mask=offs < L, other=0.0)" in texts
    assert "best = (tl.argmax(x, axis=0) + k)" in texts
    cued = [e for e in found if e.cue]
    assert cued and all("does not change with the loop's `k`" in e.cue for e in cued)


def test_accumulator_move_takes_a_scalar_carry_out_of_the_loop() -> None:
    found = [e for e in of("accumulator-move", CONV) if "carry" in e.description and "before" in e.description]
    assert found
    lines = found[0].source.splitlines()
    loop = next(i for i, line in enumerate(lines) if line.strip().startswith("for k"))
    assert "carry = 0.0" not in lines[loop + 1]


MATMUL_LOOP = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, K, stride_ak, stride_bk, BLOCK_K: tl.constexpr):
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_k * stride_ak
        b_ptrs = b_ptr + offs_k * stride_bk
        acc = 0.0
        for k in range(0, K, BLOCK_K):
            acc += tl.sum(tl.load(a_ptrs) * tl.load(b_ptrs), axis=0)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K
        tl.store(c_ptr, acc)
""")


def test_advance_stride_scales_an_element_count_by_a_stride_and_cues_it() -> None:
    found = of("advance-stride", MATMUL_LOOP)
    texts = {changed(e, MATMUL_LOOP)[1] for e in found}
    assert "b_ptrs += (BLOCK_K) * stride_bk" in texts
    assert all("advances without a stride" in e.cue for e in found)


def test_offset_term_cues_the_address_that_lacks_the_row_every_other_pointer_has() -> None:
    source = textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, mean_ptr, out_ptr, stride, n, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            target = tl.load(x_ptr + row * stride)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
            mean = tl.load(mean_ptr)
            tl.store(out_ptr + row * stride + cols, x - mean, mask=cols < n)
    """)
    found = of("offset-term", source)
    cued = {changed(e, source)[1] for e in found if e.cue}
    assert "mean = tl.load(mean_ptr + row)" in cued
    # A value loaded at the row's address is data: it is not a program index.
    assert not any("target *" in changed(e, source)[1] for e in found)


def test_constant_offers_a_derived_form_of_a_formula_constant_and_cues_it() -> None:
    source = KERNEL.replace("* 0.04715", "* 0.6366197723675814")
    found = [e for e in of("constant", source, "import torch\n\ndef f(x):\n    return torch.nn.functional.gelu(x)\n")]
    texts = [changed(e, source)[1] for e in found if "0.6366" in e.description]
    assert "acc += tl.exp(x) * 0.7978845608028654" in texts  # sqrt(2/pi), not 2/pi
    assert any(e.cue for e in found)


def test_constant_reaches_host_literals_and_pytorch_defaults() -> None:
    source = KERNEL.replace("out = torch.empty_like(x)", "out = torch.empty_like(x)\n        eps = 1e-3")
    reference = textwrap.dedent("""
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = torch.nn.LayerNorm(8)
    """)
    texts = [changed(e, source)[1] for e in of("constant", source, reference) if "1e-3" in e.description]
    assert texts[0] == "eps = 1e-05"


def test_reference_literals_that_only_make_inputs_are_not_formula_constants() -> None:
    reference = textwrap.dedent("""
        import torch

        alpha = 0.25

        class Model(torch.nn.Module):
            def __init__(self, alpha):
                super().__init__()
                self.alpha = alpha

            def forward(self, x):
                return x * self.alpha

        def get_inputs():
            return [torch.randn(4, 4) * 3.0]

        def get_init_inputs():
            return [alpha]
    """)
    program = Program.parse(KERNEL, reference)
    assert program is not None
    assert 0.25 in program.reference_constants and 3.0 not in program.reference_constants


def test_missing_factor_uses_a_measured_scale_and_formula_parameters_inside_helpers() -> None:
    source = textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _soft(x, beta):
            soft = tl.log(1.0 + tl.exp(beta * x))
            return tl.where(x > 20.0, x, soft)


        @triton.jit
        def k(x_ptr, out_ptr, n, beta, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            tl.store(out_ptr + offs, _soft(x, beta), mask=offs < n)


        class ModelNew(torch.nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), self.beta, BLOCK=64)
                return out
    """)
    texts = {changed(e, source)[1] for e in of("missing-factor", source, "")}
    assert "soft = (tl.log(1.0 + tl.exp(beta * x))) / beta" in texts
    assert not any("/ n" in t for t in texts)  # a size is not a formula parameter
    program = Program.parse(source, "", scale=2.0)
    assert program is not None
    scaled = [e for e in edits(program, ["missing-factor"]) if e.cue]
    assert scaled and all("* 0.5" in e.description for e in scaled)
    fitted = Program.parse(source, "", scale=1.37)
    assert fitted is not None and not any(e.cue for e in edits(fitted, ["missing-factor"]))


def test_divisor_takes_a_square_root_or_another_count() -> None:
    source = KERNEL.replace("total = tl.max(acc, axis=0)", "total = tl.max(acc, axis=0) / n_cols").replace(
        "out = torch.empty_like(x)", "out = torch.empty_like(x)\n        scale = 1.0 / n_cols"
    )
    texts = {changed(e, source)[1] for e in of("divisor", source)}
    assert "total = tl.max(acc, axis=0) / tl.sqrt((n_cols) * 1.0)" in texts
    assert "scale = 1.0 / (n_cols) ** 0.5" in texts
    assert "total = tl.max(acc, axis=0) / (n_cols - 1)" in texts  # an unbiased variance's n - 1


def test_true_division_replaces_a_floor_division_in_a_stored_value_only() -> None:
    source = RUNNING.replace("carry = p", "carry = p // win")
    texts = {changed(e, source)[1] for e in of("true-division", source)}
    assert texts == {"carry = p / win"}  # not `offs // ...` in an address, nor on the host


def test_zero_init_zeroes_an_uninitialised_output_cued_by_atomics() -> None:
    (plain,) = of("zero-init", RUNNING)
    assert changed(plain, RUNNING)[1] == "out = torch.zeros_like(x)" and not plain.cue
    atomic = RUNNING.replace("tl.store(y_ptr + offs,", "tl.atomic_add(y_ptr + offs,")
    (cued,) = of("zero-init", atomic)
    assert cued.cue == "a kernel adds into memory with atomics"


RUNNING = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def running_kernel(x_ptr, y_ptr, n, win, step, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid + tl.arange(0, BLOCK)
        keep = offs < n
        m = tl.min(tl.load(x_ptr + offs * win, mask=keep, other=0.0), axis=0)
        carry = 1.0
        for start in range(0, n, BLOCK):
            p = tl.reduce(tl.load(x_ptr + start + offs, mask=keep, other=1.0), 0, _mul)
            carry = p
        y = tl.where(offs > 2, offs * 1.0, tl.sigmoid(offs * 1.0))
        tl.store(y_ptr + offs, y * carry - m, mask=keep & (offs > 0))


    class ModelNew(torch.nn.Module):
        def forward(self, x, idx):
            out = torch.empty_like(x)
            running_kernel[(4,)](x, out, x.numel(), 2, 3, BLOCK=16)
            return out, idx.view(torch.int32)
""")


def test_reduction_swap_exchanges_min_and_max() -> None:
    (edit,) = of("reduction-swap", RUNNING)
    assert changed(edit, RUNNING)[1].startswith("m = tl.max(")


def test_index_scalar_replaces_the_factor_of_an_index() -> None:
    texts = {changed(e, RUNNING)[1] for e in of("index-scalar", RUNNING)}
    assert "m = tl.min(tl.load(x_ptr + offs * step, mask=keep, other=0.0), axis=0)" in texts


def test_block_scale_multiplies_an_unscaled_program_id_by_a_block_size() -> None:
    (edit,) = of("block-scale", RUNNING)
    assert changed(edit, RUNNING)[1] == "offs = pid * BLOCK + tl.arange(0, BLOCK)"


def test_mask_clause_drops_an_extra_condition_from_a_store_mask() -> None:
    texts = {changed(e, RUNNING)[1] for e in of("mask-clause", RUNNING)}
    assert "tl.store(y_ptr + offs, y * carry - m, mask=(keep))" in texts


def test_accumulate_combines_an_overwritten_running_value_with_itself() -> None:
    texts = {changed(e, RUNNING)[1] for e in of("accumulate", RUNNING)}
    assert "carry = carry * (p)" in texts and "carry = tl.maximum(carry, p)" in texts


def test_accumulate_puts_the_combination_of_the_partial_s_reduction_first() -> None:
    source = RUNNING.replace("carry = p", "carry = tl.sum(p, axis=0)")
    texts = [changed(e, source)[1] for e in of("accumulate", source)]
    assert texts[0] == "carry = carry + (tl.sum(p, axis=0))" and len(texts) == 4
    source = RUNNING.replace("carry = p", "carry = tl.max(p, axis=0)")
    assert changed(of("accumulate", source)[0], source)[1] == "carry = tl.maximum(carry, tl.max(p, axis=0))"
    assert changed(of("accumulate", RUNNING)[0], RUNNING)[1] == "carry = carry * (p)"  # no reduction: as before


def test_nested_factor_multiplies_a_branch_or_an_argument() -> None:
    texts = {changed(e, RUNNING)[1] for e in of("nested-factor", RUNNING, "")}
    assert "y = tl.where(offs > 2, (0.5 * offs * 1.0), tl.sigmoid(offs * 1.0))" in texts
    assert "y = tl.where(offs > 2, offs * 1.0, tl.sigmoid((0.5 * offs * 1.0)))" in texts


def test_host_dtype_converts_instead_of_reinterpreting() -> None:
    (edit,) = of("host-dtype", RUNNING)
    assert changed(edit, RUNNING)[1] == "return out, idx.to(torch.int32)"


@pytest.mark.slow
def test_edits_and_their_order_do_not_depend_on_the_string_hash_seed() -> None:
    # The search breaks ties by the order of the edits: a set's order would make runs irreproducible.
    import os
    import subprocess
    import sys

    script = (
        "import sys; sys.path.insert(0, 'tests/bugs'); import test_edit as t\n"
        "from kope.bugs.edit import Program, edits\n"
        "from pathlib import Path\n"
        "examples = [Path('src/kope/corpora/examples') / f'{n}.py' for n in ('accumulator-reset', 'wrong-stride')]\n"
        "for s in [t.KERNEL, t.TWO_D, t.CONV, t.RUNNING] + [p.read_text() for p in examples]:\n"
        "    print([(e.operator, e.line, e.description) for e in edits(Program.parse(s))])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


@pytest.mark.slow
@pytest.mark.parametrize("terms", [500, 3000])
def test_a_candidate_nested_deeper_than_the_analysis_gets_no_edits_instead_of_a_crash(terms: int) -> None:
    # 500 terms parse but are deeper than the operators' recursion; 3000 do not even parse. A hostile (or
    # generated) candidate must not take the repair down with a RecursionError.
    deep = " + ".join(["cols"] * terms)
    source = KERNEL.replace("x_row + start + cols + 1", deep)
    program = Program.parse(source, REFERENCE)
    if program is None:
        assert terms == 3000
        return
    found = edits(program)
    assert all(e.source != source for e in found)
    assert {e.operator for e in found} >= {"compare-flip", "floor-to-cdiv"}  # the shallow sites are still edited


REDEFINED = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def clipped_kernel(a_ptr, b_ptr, o_ptr, total, gain, BLOCK: tl.constexpr):
        idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        live = (idx < total) & (idx >= 0)
        u = tl.load(a_ptr + idx, mask=live, other=0.0) - tl.load(b_ptr + idx, mask=live, other=0.0)
        v = tl.where(u > gain, u - gain // 2, u * u)
        v = tl.where(live, v, 0.0)
        tl.store(o_ptr + idx, v, mask=live)


    class ModelNew(torch.nn.Module):
        def forward(self, a, b):
            o = torch.empty_like(a)
            clipped_kernel[(triton.cdiv(a.numel(), 64),)](a, b, o, a.numel(), 0.7, BLOCK=64)
            return o
""")


def test_factors_reach_a_name_redefined_from_itself_and_keep_precedence_and_skip_masks() -> None:
    nested = of("nested-factor", REDEFINED, "")
    texts = {changed(e, REDEFINED)[1] for e in nested}
    # `v = tl.where(live, v, 0.0)` reaches the first `v = ...`, two assignments before the store.
    assert "v = tl.where(u > gain, u - gain // 2, (0.5 * u * u))" in texts
    # A factor on a difference multiplies all of it.
    assert "v = tl.where(u > gain, (0.5 * (u - gain // 2)), u * u)" in texts
    # Never on a mask: the condition of a tl.where, a comparison, `live`'s definition.
    assert not any("* live" in t or "* (u > gain)" in t or "* idx <" in t or "(0.5 * (idx" in t for t in texts)
    missing = {changed(e, REDEFINED)[1] for e in of("missing-factor", REDEFINED, "")}
    assert not any(t.startswith("live =") for t in missing)
    assert any(t.startswith("v = (tl.where(u > gain") for t in missing)


VALUES = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def gate_kernel(p_ptr, q_ptr, o_ptr, rows, cols, sp, so, BR: tl.constexpr, BC: tl.constexpr):
        r = tl.program_id(0) * BR + tl.arange(0, BR)
        c = tl.arange(0, BC)
        keep = (r[:, None] < rows) & (c[None, :] < cols)
        p = tl.load(p_ptr + r[:, None] * sp + c[None, :], mask=keep, other=0.0)
        q = tl.load(q_ptr + r[:, None] * sp + c[None, :], mask=keep, other=1.0)
        g = 1.0 / (1.0 + tl.exp(p))
        h = tl.where(p > 0, p - q, -q)
        kl = tl.where(keep, p * tl.log(p / q), 0.0)
        tl.store(o_ptr + r * so, tl.sum(g * h + kl, axis=0), mask=r < rows)
""")


def test_sign_flips_a_difference_an_exponent_and_a_negation_in_values_only() -> None:
    texts = {changed(e, VALUES)[1] for e in of("sign", VALUES, "")}
    assert "g = 1.0 / (1.0 + tl.exp(-p))" in texts
    assert "h = tl.where(p > 0, (p + q), -q)" in texts and "h = tl.where(p > 0, (q - p), -q)" in texts
    assert "h = tl.where(p > 0, p - q, q)" in texts
    # Never in an address, a mask or a position.
    assert not any(t.startswith(("r =", "keep =", "p = tl.load", "q = tl.load")) for t in texts)
    assert not any("r[:, None] * sp -" in t for t in texts)


def test_branch_swap_exchanges_a_computed_where_but_not_a_padding_mask() -> None:
    texts = {changed(e, VALUES)[1] for e in of("branch-swap", VALUES, "")}
    assert texts == {"h = tl.where(p > 0, -q, p - q)"}


def test_reduce_axis_offers_the_other_axis_of_a_2d_block() -> None:
    (edit,) = of("reduce-axis", VALUES, "")
    assert changed(edit, VALUES)[1] == "tl.store(o_ptr + r * so, tl.sum(g * h + kl, axis=1), mask=r < rows)"
    assert of("reduce-axis", KERNEL) == []  # 1-D blocks: no other axis


def test_xlogy_guards_a_product_with_a_log_where_the_factor_is_zero() -> None:
    texts = {changed(e, VALUES)[1] for e in of("xlogy", VALUES, "")}
    assert texts == {"kl = tl.where(keep, tl.where(p == 0, 0.0, p * tl.log(p / q)), 0.0)"}


ATOMIC = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def entropy_kernel(p_ptr, out_ptr, n, BLOCK: tl.constexpr):
        total = tl.zeros([BLOCK], dtype=tl.float32)
        for lo in range(0, n, BLOCK):
            at = lo + tl.arange(0, BLOCK)
            w = tl.load(p_ptr + at, mask=at < n, other=0.0)
            part = w * tl.log(w)
            total += part
        tl.atomic_add(out_ptr, -tl.sum(total, axis=0))
""")


def test_the_value_flow_reaches_through_an_atomic_store_and_an_augmented_assignment() -> None:
    texts = {changed(e, ATOMIC)[1] for e in of("xlogy", ATOMIC, "")}
    assert texts == {"part = tl.where(w == 0, 0.0, w * tl.log(w))"}
    signs = {changed(e, ATOMIC)[1] for e in of("sign", ATOMIC, "")}
    assert "tl.atomic_add(out_ptr, tl.sum(total, axis=0))" in signs


def test_broadcast_swap_cues_a_vector_broadcast_against_its_index() -> None:
    source = textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def affine_kernel(x_ptr, g_ptr, h_ptr, y_ptr, F, T, BF: tl.constexpr, BT: tl.constexpr):
            f = tl.program_id(0) * BF + tl.arange(0, BF)
            t = tl.arange(0, BT)
            at = f[:, None] * T + t[None, :]
            keep = (f[:, None] < F) & (t[None, :] < T)
            gain = tl.load(g_ptr + f, mask=f < F, other=1.0)
            bias = tl.load(h_ptr + f, mask=f < F, other=0.0) * 2.0
            y = tl.load(x_ptr + at, mask=keep) * gain[:, None] + bias[None, :]
            tl.store(y_ptr + at, y, mask=keep)
    """)
    cued = {changed(e, source)[1] for e in of("broadcast-swap", source, "") if e.cue}
    assert cued == {"y = tl.load(x_ptr + at, mask=keep) * gain[:, None] + bias[:, None]"}


def test_broadcast_swap_cues_a_reduction_broadcast_along_the_axis_it_reduced() -> None:
    source = textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def center_kernel(x_ptr, y_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
            r = tl.program_id(0) * BR + tl.arange(0, BR)
            c = tl.arange(0, BC)
            at = r[:, None] * C + c[None, :]
            ok = (r[:, None] < R) & (c[None, :] < C)
            v = tl.load(x_ptr + at, mask=ok, other=0.0)
            top = tl.max(v, axis=1)
            shifted = top * 0.5
            tl.store(y_ptr + at, v - top[None, :] + shifted[:, None], mask=ok)
    """)
    cued = [(changed(e, source)[1], e.cue) for e in of("broadcast-swap", source, "") if e.cue]
    assert len(cued) == 1 and "top[:, None] + shifted[:, None]" in cued[0][0] and "keeps axis 0" in cued[0][1]


def test_offset_term_cues_an_index_another_address_offsets_along_the_same_stride() -> None:
    source = textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def slab_kernel(x_ptr, s_ptr, y_ptr, per, span, sx, sk, BLOCK: tl.constexpr):
            b = tl.program_id(0)
            h = tl.program_id(1)
            start = b * sx + h * per * sk
            i = tl.arange(0, BLOCK)
            k = i // span
            j = i % span
            keep = i < per * span
            x = tl.load(x_ptr + start + k * sk + j, mask=keep)
            kk = k
            s = tl.load(s_ptr + kk, mask=keep)
            tl.store(y_ptr + start + k * sk + j, x * s, mask=keep)


        def run(x, scale, per, span):
            y = x.clone()
            slab_kernel[(x.shape[0], x.shape[1] // per)](x, scale, y, per, span, x.stride(0), x.stride(1), BLOCK=64)
            return y
    """)
    cued = {changed(e, source)[1] for e in of("offset-term", source, "") if "same stride" in e.cue}
    assert cued == {"kk = k + h * per"}


NORM = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _norm_rows(inp, res, C, L, s_b, s_c, slope, eps, CB: tl.constexpr, LB: tl.constexpr):
        b = tl.program_id(0)
        lanes = tl.arange(0, CB)
        base = b * s_b + lanes * s_c
        ok = lanes < C
        v = tl.load(inp + base, mask=ok, other=0.0)
        ms = tl.sum(v * v, axis=0) / CB
        inv = 1.0 / (tl.sqrt(ms) + eps)
        ch = lanes % C
        soft = tl.log2(1.0 + tl.exp(-v))
        running = 0.0
        for start in range(0, L, LB):
            diff = v - ms
            running += tl.sum(diff * diff, axis=0)
            running = tl.maximum(running, 0.0)
        w = tl.dot(v.to(tl.float16), v.to(tl.float16))
        tl.store(res + b * s_b + tl.arange(0, CB), v * inv * tl.exp(soft) * ch * running * w, mask=ok)


    class ModelNew(torch.nn.Module):
        def __init__(self, slope, eps):
            super().__init__()
            self.slope, self.eps = slope, eps

        def forward(self, x, target):
            B, C = x.shape
            N = target.numel()
            out = torch.empty_like(target)
            _norm_rows[(B,)](x, out, C, N, x.stride(0), x.stride(1), self.slope, self.eps, CB=64, LB=16)
            return out
""")


def texts_of(name: str, source: str = NORM) -> set[str]:
    return {changed(e, source)[1] for e in of(name, source, "")}


def test_into_call_moves_a_term_inside_the_root() -> None:
    assert "inv = 1.0 / (tl.sqrt(ms + eps))" in texts_of("into-call")


def test_abs_argument_takes_the_exponent_in_absolute_value() -> None:
    assert "soft = tl.log2(1.0 + tl.exp(-tl.abs(v)))" in texts_of("abs-argument")


def test_padding_where_zeroes_an_accumulated_block_where_the_mask_is_off() -> None:
    assert "diff = tl.where(ok, v - ms, 0.0)" in texts_of("padding-where")


def test_index_divide_divides_a_flat_index_before_its_modulus() -> None:
    texts = texts_of("index-divide")
    assert "ch = (lanes // L) % C" in texts and not any("// C) % C" in t for t in texts)


def test_named_index_uses_the_name_that_holds_the_whole_index() -> None:
    source = NORM.replace("base = b * s_b + lanes * s_c", "base = b * s_b + lanes * s_c\n    cols = b * CB + lanes")
    source = source.replace("res + b * s_b + tl.arange(0, CB)", "res + b * s_b + lanes")
    assert "tl.store(res + b * s_b + cols, v * inv * tl.exp(soft) * ch * running * w, mask=ok)" in {
        changed(e, source)[1] for e in of("named-index", source)
    }


def test_atomic_store_adds_instead_of_storing() -> None:
    (text,) = texts_of("atomic-store")
    assert text.startswith("tl.atomic_add(res + b * s_b")


def test_alloc_dtype_gives_the_output_another_input_s_dtype() -> None:
    texts = texts_of("alloc-dtype")
    assert "out = torch.empty_like(target, dtype=x.dtype)" in texts
    assert "out = torch.empty_like(target, dtype=torch.float32)" in texts


def test_argument_swap_passes_another_host_size() -> None:
    texts = texts_of("argument-swap")
    assert any("_norm_rows[(B,)](x, out, C, B," in t for t in texts)
    assert any("_norm_rows[(B,)](x, out, N, N," in t for t in texts)


def test_running_init_starts_a_carried_scalar_at_another_identity() -> None:
    texts = texts_of("running-init")
    assert {'running = float("-inf")', 'running = float("inf")', "running = 1.0"} <= texts


def test_drop_downcast_one_cast_or_all() -> None:
    sources = [e.source for e in of("drop-downcast", NORM, "")]
    assert any("tl.dot(v, v.to(tl.float16))" in s for s in sources)
    assert any("tl.dot(v, v)" in s for s in sources)


def test_nested_factor_divides_by_and_adds_a_formula_parameter() -> None:
    texts = texts_of("nested-factor")
    assert "soft = tl.log2(1.0 + (tl.exp(-v) / slope))" in texts
    assert "soft = tl.log2(((1.0 + tl.exp(-v)) + slope))" in texts


def test_divisor_takes_a_block_size_to_a_count() -> None:
    assert "ms = tl.sum(v * v, axis=0) / C" in texts_of("divisor")


def test_missing_factor_undoes_a_scale_of_a_mathematical_constant() -> None:
    program = Program.parse(NORM, "", scale=1.0 / 0.6931471805599453)
    assert program is not None
    cued = [e for e in edits(program, ["missing-factor"]) if e.cue]
    assert cued and all("0.693147" in e.description for e in cued)


def test_log_base_switches_a_logarithm_to_the_other_base() -> None:
    texts = texts_of("log-base")
    assert "soft = tl.log(1.0 + tl.exp(-v))" in texts and "soft = tl.log2(1.0 + tl.exp2(-v))" in texts


def test_shared_term_adds_the_denominator_s_smoothing_term_to_the_numerator() -> None:
    source = NORM.replace("inv = 1.0 / (tl.sqrt(ms) + eps)", "inv = (2.0 * ms) / (ms + ms + eps)")
    texts = {changed(e, source)[1] for e in of("shared-term", source, "")}
    assert texts == {"inv = ((2.0 * ms) + eps) / (ms + ms + eps)"}


def test_stride_argument_cues_another_tensor_s_stride_among_a_run_of_one_tensor_s() -> None:
    source = RUNNING.replace(
        "running_kernel[(4,)](x, out, x.numel(), 2, 3, BLOCK=16)",
        "running_kernel[(4,)](x, out, x.stride(0), out.stride(1), x.stride(2), BLOCK=16)",
    )
    cued = [e for e in of("stride-argument", source) if e.cue]
    assert [changed(e, source)[1] for e in cued] == [
        "running_kernel[(4,)](x, out, x.stride(0), x.stride(1), x.stride(2), BLOCK=16)"
    ]


def test_offset_term_puts_the_address_s_own_tensor_s_stride_first() -> None:
    source = textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _k(a_ptr, w_ptr, b_ptr, C, sab, sac, sbb, sbc, CB: tl.constexpr):
            n = tl.program_id(0)
            c = tl.arange(0, CB)
            v = tl.load(a_ptr + n * sab + c * sac) * tl.load(w_ptr + c)
            tl.store(b_ptr + c * sbc, v)


        class ModelNew(torch.nn.Module):
            def forward(self, a):
                b = torch.empty_like(a)
                _k[(a.shape[0],)](a, self.w, b, a.shape[1], a.stride(0), a.stride(1), b.stride(0), b.stride(1), CB=64)
                return b
    """)
    found = [e for e in of("offset-term", source) if "to `b_ptr" in e.description]
    assert found[0].description == "add `+ n * sbb` to `b_ptr + c * sbc`" and found[0].cue
    # the weight, passed without strides beside strided tensors, is a vector: no cue to offset it by the batch
    assert not any(e.cue for e in of("offset-term", source) if "to `w_ptr" in e.description)


POOL = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _pool(src, dst, C, G, sb, sc, sh, db, OUTB: tl.constexpr):
        pid = tl.program_id(0)
        b = pid // G
        g = pid % G
        base = src + b * sb + g * sc
        oh = tl.program_id(1) * OUTB + tl.arange(0, OUTB)
        best = tl.full([OUTB], float("-inf"), dtype=tl.float32)
        acc = tl.zeros([OUTB], dtype=tl.float32)
        for kh in tl.static_range(2):
            ih = oh + kh
            best = tl.maximum(best, tl.load(base + ih * sh))
            acc += tl.dot(best, best)
        for off in range(0, C, OUTB):
            cols = tl.arange(0, OUTB)
            tl.store(dst + b * db + cols, best, mask=cols < C)


    class ModelNew(torch.nn.Module):
        def forward(self, x):
            half = torch.float16 if x.dtype == torch.float16 else torch.float32
            out = torch.empty(x.shape[0], device=x.device, dtype=half)
            scale = 1.0 / (x.shape[1] ** 0.5)
            _pool[(4, 2)](x, out, x.shape[1], 2, x.stride(1), x.stride(0), x.stride(2), out.stride(0), OUTB=16)
            return out * scale
""")


def pool_texts(name: str) -> set[str]:
    return {changed(e, POOL)[1] for e in of(name, POOL, "")}


def test_index_factor_scales_an_index_by_what_it_steps_over() -> None:
    texts = pool_texts("index-factor")
    assert "base = src + b * sb + g * C * sc" in texts  # the group's first channel
    assert "ih = oh * 2 + kh" in texts  # a window of stride 2


def test_if_branch_keeps_one_branch_of_a_conditional() -> None:
    found = of("if-branch", POOL, "")
    assert {e.label for e in found} == {"precision-loss"}
    assert "half = torch.float32" in pool_texts("if-branch")


def test_loop_offset_puts_the_loop_s_offset_into_an_index_made_in_the_loop() -> None:
    cued = [e for e in of("loop-offset", POOL, "") if e.cue]
    assert [changed(e, POOL)[1] for e in cued] == ["cols = off + tl.arange(0, OUTB)"]


def test_divisor_drops_an_inverse_too_many() -> None:
    assert "scale = x.shape[1] ** 0.5" in pool_texts("divisor")


def test_stride_argument_cues_strides_passed_in_falling_order_and_advance_stride_skips_accumulators() -> None:
    cued = [e for e in of("stride-argument", POOL, "") if e.cue]
    assert [changed(e, POOL)[1] for e in cued] == [
        "_pool[(4, 2)](x, out, x.shape[1], 2, x.stride(0), x.stride(1), x.stride(2), out.stride(0), OUTB=16)"
    ]
    assert of("advance-stride", POOL, "") == []  # `acc += tl.dot(...)` is no pointer


def test_padding_where_never_wraps_a_block_of_zeros() -> None:
    source = NORM.replace(
        "running += tl.sum(diff * diff, axis=0)",
        "acc = tl.zeros((CB,), dtype=tl.float32)\n        acc += diff * diff\n        running += tl.sum(acc, axis=0)",
    )
    texts = {changed(e, source)[1] for e in of("padding-where", source, "")}
    assert "diff = tl.where(ok, v - ms, 0.0)" in texts
    assert not any("tl.where(ok, tl.zeros" in t for t in texts)  # masking zeros changes nothing


def test_padding_where_masks_every_summed_block_at_once_first() -> None:
    """A shifted input summed for the mean and its deviation summed for the variance: each alone leaves the other's
    padded lanes in its sum, so the joint edit comes before the single ones."""
    source = NORM.replace(
        "ms = tl.sum(v * v, axis=0) / CB", "shifted = v + slope\n    ms = tl.sum(shifted, axis=0) / CB"
    )
    made = of("padding-where", source, "")
    first = made[0].source
    assert "shifted = tl.where(ok, v + slope, 0.0)" in first and "diff = tl.where(ok, v - ms, 0.0)" in first
    singles = [e.source for e in made[1:]]
    assert any("shifted = tl.where(ok, v + slope, 0.0)" in t and "diff = v - ms" in t for t in singles)


def test_padding_where_also_wraps_a_computed_call() -> None:
    source = NORM.replace("diff = v - ms", "diff = tl.maximum(v - ms, 0.0)")
    assert "diff = tl.where(ok, tl.maximum(v - ms, 0.0), 0.0)" in {
        changed(e, source)[1] for e in of("padding-where", source, "")
    }


def test_divisor_takes_the_count_a_loop_before_it_visits() -> None:
    source = POOL.replace("for off in range(0, C, OUTB):", "for off in range(g, C, OUTB):").replace(
        "tl.store(dst + b * db + cols, best, mask=cols < C)", "tl.store(dst + b * db + cols, best / G, mask=cols < C)"
    )
    texts = {changed(e, source)[1] for e in of("divisor", source, "")}
    assert "tl.store(dst + b * db + cols, best / (C - g), mask=cols < C)" in texts


SCAN = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scan(x_ptr, keep_ptr, o_ptr, n, lo, hi, B: tl.constexpr):
        r = tl.program_id(0)
        offs = tl.arange(0, B)
        cols = r * B + offs
        keep = tl.load(keep_ptr + cols) != 0
        s = 0.0
        v = tl.load(x_ptr + cols)
        s += v
        count = tl.sum(keep.to(tl.float32), axis=0)
        mean = s / count + tl.log(tl.abs(v)) / (offs + 1)
        tl.store(o_ptr + cols, tl.minimum(tl.maximum(mean, lo), hi))


    class ModelNew(torch.nn.Module):
        def __init__(self, lo, hi):
            super().__init__()
            self.lo = lo
            self.hi = hi

        def forward(self, x, keep):
            out = torch.empty_like(x)
            M, N = x.shape
            n = x.shape[0]
            grid = (triton.cdiv(M, 64),)
            _scan[grid](x, keep, out, n, self.lo, self.lo, B=64)
            return out
""")


def scan_texts(name: str) -> set[str]:
    return {changed(e, SCAN)[1] for e in of(name, SCAN, "")}


def test_argument_swap_also_in_the_grid_and_for_an_attribute_passed_twice() -> None:
    texts = scan_texts("argument-swap")
    assert "grid = (triton.cdiv(N, 64),)" in texts
    assert "_scan[grid](x, keep, out, n, self.lo, self.hi, B=64)" in texts
    cued = [e for e in of("argument-swap", SCAN, "") if e.cue]
    assert cued and all(e.cue == "`self.lo` is passed twice" for e in cued)


PARTIALS = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _finish(part, res, count, total, P: tl.constexpr):
        i = tl.arange(0, P)
        s = tl.sum(tl.load(part + i, mask=i < count, other=0.0), axis=0)
        tl.store(res, s / total)

    class ModelNew(torch.nn.Module):
        def forward(self, x):
            size = x.numel()
            blocks = triton.cdiv(size, 256)
            part = x.new_zeros(blocks)
            res = torch.empty((), device=x.device)
            grid = (1,)
            _finish[grid](part, res, blocks, blocks, P=64)
            return res
""")


def test_argument_swap_cues_a_size_passed_twice_and_never_offers_a_tensor_as_a_size() -> None:
    found = of("argument-swap", PARTIALS, "")
    texts = {changed(e, PARTIALS)[1] for e in found}
    assert "_finish[grid](part, res, blocks, size, P=64)" in texts
    offered = {e.description.split("->")[1].split("`")[1] for e in found}
    assert offered == {"size"}  # not the buffers `part` and `res`, nor the grid
    assert {e.cue for e in found} == {"`blocks` is passed twice"}


def test_argument_swap_cues_one_size_for_two_axes_of_a_grid() -> None:
    source = PARTIALS.replace(
        "grid = (1,)", "rows, cols = x.shape\n        grid = (triton.cdiv(rows, 8), triton.cdiv(rows, 16))"
    )
    cued = [changed(e, source)[1] for e in of("argument-swap", source, "") if "two axes" in e.cue]
    assert "grid = (triton.cdiv(cols, 8), triton.cdiv(rows, 16))" in cued
    assert "grid = (triton.cdiv(rows, 8), triton.cdiv(cols, 16))" in cued
    assert len(cued) == 6  # each of the two `rows` replaced by the three other sizes, and only those are cued


TILES = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _tile(x_ptr, o_ptr, M, N, sm, BM: tl.constexpr, BN: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(axis=1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        keep = (rm[:, None] < M) & (rn[None, :] < N)
        v = tl.load(x_ptr + rm[:, None] * sm + rn[None, :], mask=keep)
        tl.store(o_ptr + rm[:, None] * sm + rn[None, :], v, mask=keep)

    class ModelNew(torch.nn.Module):
        def forward(self, x):
            rows, width = x.shape
            depth = x.shape[0] * 2
            grid = lambda meta: (triton.cdiv(rows, meta["BM"]), triton.cdiv(rows, meta["BN"]))
            out = torch.empty_like(x)
            _tile[grid](x, out, rows, width, x.stride(0), BM=16, BN=16)
            return out
""")


def test_argument_swap_offers_first_the_size_that_bounds_the_axis_in_the_kernel() -> None:
    # `depth` comes before `width` by name, but the kernel compares axis 1's indices with N, passed `width`
    cued = [e for e in of("argument-swap", TILES, "") if "two axes" in e.cue]
    second = [changed(e, TILES)[1] for e in cued if e.description.startswith("`rows`") and "depth" not in e.description]
    assert 'grid = lambda meta: (triton.cdiv(rows, meta["BM"]), triton.cdiv(width, meta["BN"]))' in second
    ranked = [changed(e, TILES)[1] for e in cued]
    fix = ranked.index('grid = lambda meta: (triton.cdiv(rows, meta["BM"]), triton.cdiv(width, meta["BN"]))')
    wrong = ranked.index('grid = lambda meta: (triton.cdiv(rows, meta["BM"]), triton.cdiv(depth, meta["BN"]))')
    assert fix < wrong


def test_clamp_exponent_caps_an_uncapped_exponential_argument_in_helpers_too() -> None:
    source = RANGE.replace("return tl.minimum(a, b)", "e = tl.exp(2.0 * a)\n    return (e - 1.0) / (e + 1.0) + b")
    source = source.replace("v * 2.0", "tl.exp(v - tl.max(v, axis=0))")
    texts = {changed(e, source)[1] for e in of("clamp-exponent", source, "")}
    assert texts == {"e = tl.exp(tl.minimum(2.0 * a, 20.0))"}  # the max-shifted one is stable already
    # shifted by a name bound to a maximum (whatever it is called): stable too
    named = source.replace("tl.exp(v - tl.max(v, axis=0))", "tl.exp(v - peak)").replace(
        "low = tl.where(keep, v, 0.0)", "low = tl.where(keep, v, 0.0)\n    peak = tl.max(v, axis=0)"
    )
    assert {changed(e, named)[1] for e in of("clamp-exponent", named, "")} == texts


def test_grid_product_makes_an_axis_count_flattened_rows() -> None:
    source = PARTIALS.replace("grid = (1,)", "grid = (size, blocks)")
    texts = {changed(e, source)[1] for e in of("grid-product", source, "")}
    assert texts == {"grid = (size * blocks, blocks)", "grid = (size, blocks * size)"}


def test_complement_offers_one_minus_a_formula_parameter() -> None:
    source = SCAN.replace("self.lo, self.lo", "self.lo, self.hi")
    texts = {changed(e, source)[1] for e in of("complement", source, "")}
    assert texts == {
        "tl.store(o_ptr + cols, tl.minimum(tl.maximum(mean, (1.0 - lo)), hi))",
        "tl.store(o_ptr + cols, tl.minimum(tl.maximum(mean, lo), (1.0 - hi)))",
    }  # the two formula parameters; not `n`, a size


def test_host_size_takes_another_size_of_the_tensor() -> None:
    assert "n = x.numel()" in scan_texts("host-size")


def test_add_mask_makes_a_mask_from_the_block_index_and_pads_with_a_product_s_one() -> None:
    assert "v = tl.load(x_ptr + cols, mask=cols < n, other=1.0)" in scan_texts("add-mask")


def test_divisor_counts_from_one_and_never_divides_by_zero() -> None:
    texts = scan_texts("divisor")
    assert "mean = s / tl.maximum(count, 1.0) + tl.log(tl.abs(v)) / (offs + 1)" in texts
    assert "mean = s / (count + 1) + tl.log(tl.abs(v)) / (offs + 1)" in texts


def test_log_one_plus_and_padding_where_on_an_accumulated_name_with_a_loaded_selection() -> None:
    assert "mean = s / count + tl.log(1.0 + tl.abs(v)) / (offs + 1)" in scan_texts("log-one-plus")
    assert "s += tl.where(keep, v, 0.0)" in scan_texts("padding-where")


def test_named_index_in_a_computed_value() -> None:
    assert "mean = s / count + tl.log(tl.abs(v)) / (cols + 1)" in scan_texts("named-index")
