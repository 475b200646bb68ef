"""The generic operators (kope.bugs.generic): one-token edits by the kernel's grammar alone."""

from __future__ import annotations

import textwrap

from kope.bugs.edit import Edit, Program, edits
from kope.bugs.generic import kinds
from kope.repair.sites import GENERIC_OFFSET, Evidence, priority

SOURCE = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale_rows(src, dst, rows, cols, s_src, s_dst, gain, TILE: tl.constexpr):
        r = tl.program_id(0)
        c = tl.program_id(1)
        span = c * TILE + tl.arange(0, TILE)
        inside = span < rows
        v = tl.load(src + r * s_src + span, mask=inside, other=0.0)
        v32 = v.to(tl.float32)
        out = v * gain / cols
        tl.store(dst + r * s_dst + span - 1, out, mask=inside)


    class ModelNew(torch.nn.Module):
        def __init__(self, gain):
            super().__init__()
            self.gain = gain

        def forward(self, x):
            y = torch.empty_like(x)
            R, C = x.shape
            _scale_rows[(R, triton.cdiv(C, 64))](x, y, R, C, x.stride(0), y.stride(0), self.gain, TILE=64)
            return y
""")


def program() -> Program:
    parsed = Program.parse(SOURCE)
    assert parsed is not None
    return parsed


def lines(name: str) -> list[tuple[str, str, str]]:
    """(label, old line, new line) of each edit."""
    parsed = program()
    found = []
    for edit in edits(parsed, [name]):
        for a, b in zip(parsed.text.splitlines(), edit.source.splitlines(), strict=True):
            if a != b:
                found.append((edit.label, a.strip(), b.strip()))
                break
    return found


def test_names_are_of_a_kind_by_role_or_by_what_their_definition_calls() -> None:
    parsed = program()
    found = kinds(parsed, parsed.kernels[0])
    assert found["s_src"] == found["s_dst"] == "stride"
    assert found["src"] == found["dst"] == "pointer"
    assert found["rows"] == found["cols"] == "size"
    assert found["gain"] == "value" and found["TILE"] == "block"
    assert found["r"] == found["c"] == "position:tl.program_id"
    assert found["v"] != found["v32"]


def test_name_swap_uses_a_name_of_the_same_kind_defined_before() -> None:
    found = lines("name-swap")
    assert ("missing-mask", "inside = span < rows", "inside = span < cols") in found
    assert ("index-shift", "span = c * TILE + tl.arange(0, TILE)", "span = r * TILE + tl.arange(0, TILE)") in found
    assert (
        "wrong-stride",
        "tl.store(dst + r * s_dst + span - 1, out, mask=inside)",
        "tl.store(dst + r * s_src + span - 1, out, mask=inside)",
    ) in found
    # never a name of another kind, nor one defined after the use
    assert not any("v32" in new for _, _, new in found)
    assert not any(new.startswith("out = gain") for _, _, new in found)


def test_drop_term_removes_one_operand_with_the_label_of_where_it_is() -> None:
    found = lines("drop-term")
    assert (
        "index-shift",
        "tl.store(dst + r * s_dst + span - 1, out, mask=inside)",
        "tl.store(dst + r * s_dst + span, out, mask=inside)",
    ) in found
    assert ("wrong-normalizer", "out = v * gain / cols", "out = v * gain") in found
    # the divisor or the subtrahend alone is never what is left
    assert not any(new == "out = cols" for _, _, new in found)


def test_int_literal_is_one_off_in_arithmetic_not_in_shapes_or_program_ids() -> None:
    found = lines("int-literal")
    news = {new for _, _, new in found}
    assert "tl.store(dst + r * s_dst + span - 2, out, mask=inside)" in news
    assert "tl.store(dst + r * s_dst + span - 0, out, mask=inside)" in news
    assert not any("program_id(1)" in new and "c =" in new for new in news if new.startswith("r ="))
    assert not any("tl.arange(1" in new or "tl.arange(0, TILE + 1)" in new for new in news)


def test_generic_edits_start_behind_the_specific_operators() -> None:
    evidence = Evidence()
    evidence.patterns["wrong-stride"] = 1.0
    specific = priority(evidence, "stride-name", "wrong-stride", 10)
    generic = priority(evidence, "name-swap", "wrong-stride", 10)
    assert generic == specific + GENERIC_OFFSET < specific


def test_a_kernel_edit_of_every_generic_operator_parses() -> None:
    parsed = program()
    for edit in edits(parsed, ["name-swap", "drop-term", "int-literal"]):
        assert isinstance(edit, Edit) and Program.parse(edit.source) is not None
