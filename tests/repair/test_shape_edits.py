"""The shape edit: the fix the comparison measured, applied to what `ModelNew.forward` returns."""

from __future__ import annotations

from pathlib import Path

from kope.repair.shapes import reshaped

CANDIDATE = (Path(__file__).parents[1] / "fixtures" / "judge" / "candidates" / "total_sum_one_element.py").read_text()


def test_the_fix_goes_on_every_return_of_forward_and_nowhere_else() -> None:
    source = CANDIDATE.replace(
        "        return out\n",
        "        if x.numel() == 0:\n            return out * 0\n        return out\n",
    )
    made = reshaped(source, ".reshape(())")
    assert made is not None
    edited, line = made
    assert "return (out * 0).reshape(())" in edited and "return out.reshape(())" in edited
    assert edited.count(".reshape(())") == 2
    assert line == source.splitlines().index("            return out * 0") + 1
    assert "tl.store(out_ptr, tl.sum(acc, axis=0))" in edited


def test_no_edit_without_a_single_output_to_reshape() -> None:
    assert reshaped(CANDIDATE.replace("return out", "return out, out"), ".squeeze()") is None
    assert reshaped(CANDIDATE.replace("class ModelNew", "class Other"), ".squeeze()") is None
    assert reshaped("def broken(:\n", ".squeeze()") is None
