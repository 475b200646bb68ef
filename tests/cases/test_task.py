from __future__ import annotations

import json
from pathlib import Path

import pytest

from kope.cases.task import (
    apply_overrides,
    build_cases,
    default_case_name,
    load_cases_file,
    load_task,
    override_notes,
    parse_set,
    parse_tolerances,
)
from kope.errors import CaseError, TaskFileError

KERNELBENCH_STYLE = """import torch
import torch.nn as nn

batch_size = 16
dim = 2048 * 2  # an expression
kernel = (3, 3)
axis = -1
unused_name = 7


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return torch.softmax(x, dim=axis)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [kernel]
"""


def write(tmp_path: Path, text: str, name: str = "task.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_kernelbench_file_loads_with_sizes(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, KERNELBENCH_STYLE))
    assert task.literal_sizes == {"batch_size": 16, "kernel": (3, 3), "axis": -1, "unused_name": 7}
    assert "dim" in task.assigned_names  # an expression: known only once the task runs
    assert not task.defines_get_cases
    assert task.name == tmp_path.name  # a file called task.py is named after its folder


@pytest.mark.parametrize("missing", ["Model", "get_inputs", "get_init_inputs"])
def test_missing_definition_is_a_clear_error(tmp_path: Path, missing: str) -> None:
    text = KERNELBENCH_STYLE.replace(f"def {missing}(", f"def renamed_{missing}(").replace(
        f"class {missing}(", f"class Renamed{missing}("
    )
    with pytest.raises(TaskFileError, match=missing):
        load_task(write(tmp_path, text))


def test_unparsable_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="does not parse"):
        load_task(write(tmp_path, "def broken(:\n"))
    with pytest.raises(TaskFileError, match="not found"):
        load_task(tmp_path / "absent.py")


def test_overrides_keep_line_numbers_and_derived_expressions() -> None:
    source = "N = 2048 * 2\nshape = (N,\n  4)\na, b = 1, 2\nM: int = 5\nK = (7 +\n     1)\n"
    rewritten = apply_overrides(source, {"N": 10, "a": 3, "M": 6, "K": 2})
    scope: dict[str, object] = {}
    exec(rewritten, scope)
    assert (scope["N"], scope["shape"], scope["a"], scope["b"], scope["M"], scope["K"]) == (10, (10, 4), 3, 2, 6, 2)
    assert rewritten.count("\n") == source.count("\n")


def test_override_of_unknown_name_fails() -> None:
    with pytest.raises(CaseError, match="does not assign"):
        apply_overrides("N = 1\n", {"M": 2})


def test_parse_set() -> None:
    assert parse_set(["N=7", "shape=(3, 3)", "scale = 0.5"]) == {"N": 7, "shape": (3, 3), "scale": 0.5}
    with pytest.raises(CaseError, match="NAME=VALUE"):
        parse_set(["N"])
    with pytest.raises(CaseError, match="not a Python literal"):
        parse_set(["N=abc"])


def test_cases_first_visible_rest_hidden_and_set_applies_on_top(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, KERNELBENCH_STYLE))
    cases = build_cases(task, [{"batch_size": 4}, {"batch_size": 1, "name": "one"}], set_overrides={"dim": 33})
    assert [c.name for c in cases] == ["batch_size=4,dim=33", "one"]
    assert [c.visible for c in cases] == [True, False]
    assert all(c.overrides["dim"] == 33 for c in cases)
    merged = build_cases(task, [{"batch_size": 4}, {"batch_size": 5}], set_overrides={"batch_size": 9})
    assert len(merged) == 1


def test_explicit_visibility(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, KERNELBENCH_STYLE))
    cases = build_cases(task, [{"batch_size": 4}, {"batch_size": 2, "visible": True}])
    assert [c.visible for c in cases] == [False, True]


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ([], "no cases"),
        ("N=1", "must be a list"),
        ([1], "must be a dict"),
        ([{"nope": 1}], "does not assign"),
        ([{"batch_size": {"a": 1}}], "not a number"),
        ([{"visible": "yes"}], "'visible' must be"),
    ],
)
def test_malformed_cases(tmp_path: Path, declared: object, message: str) -> None:
    task = load_task(write(tmp_path, KERNELBENCH_STYLE))
    with pytest.raises(CaseError, match=message):
        build_cases(task, declared)  # type: ignore[arg-type]


def test_cases_file(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"batch_size": 3, "kernel": [5, 5]}]))
    task = load_task(write(tmp_path, KERNELBENCH_STYLE))
    (case,) = build_cases(task, load_cases_file(path), source="cases file")
    assert case.overrides == {"batch_size": 3, "kernel": (5, 5)}
    path.write_text("{not json")
    with pytest.raises(CaseError, match="not valid JSON"):
        load_cases_file(path)
    path.write_text("{}")
    with pytest.raises(CaseError, match="JSON list"):
        load_cases_file(path)


def test_default_case_name() -> None:
    assert default_case_name({}) == "default"
    assert default_case_name({"N": 3, "k": (3, 3)}) == "N=3,k=3x3"


def test_tolerances() -> None:
    custom = parse_tolerances({"torch.float16": (0.05, 0.01), "float32": {"atol": 1e-3, "rtol": 1e-3}})
    assert custom["float16"].atol == pytest.approx(0.05)
    assert custom["float32"].rtol == pytest.approx(1e-3)
    with pytest.raises(TaskFileError):
        parse_tolerances({"float32": "loose"})


def test_inputs_key_changes_the_input_distribution(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, KERNELBENCH_STYLE))
    plain, scaled, unit = build_cases(
        task,
        [{"batch_size": 4}, {"batch_size": 4, "inputs": {"scale": 100, "shift": -0.5}}, {"inputs": {"scale": 1}}],
    )
    assert scaled.inputs is not None and (scaled.inputs.scale, scaled.inputs.shift) == (100.0, -0.5)
    assert scaled.name == "batch_size=4,x*100-0.5" and scaled.key() != plain.key()
    assert unit.inputs is None and unit.key() == json.dumps({}), "the identity is no transform"
    assert plain.key() == json.dumps({"batch_size": 4}), "cases without a transform keep their key (and cache)"
    for bad in ({"scale": "x"}, {"scale": float("inf")}, {"offset": 1}, [1, 2]):
        with pytest.raises(CaseError, match="inputs"):
            build_cases(task, [{"inputs": bad}])


ASSIGNMENT_FORMS = """\
import torch
batch_size = 8
depth = 4; height = width = 16
channels_in, channels_out = 3, 6
[kernel_h, kernel_w] = [3, 3]
n: int = 4096
hidden = 2 * n
shape = (batch_size, channels_in)
a, b = divmod(7, 2)
class Model: pass
def get_inputs(): return []
def get_init_inputs(): return []
"""


def test_size_parameters_are_read_in_every_assignment_form(tmp_path: Path) -> None:
    path = tmp_path / "forms.py"
    path.write_text(ASSIGNMENT_FORMS)
    task = load_task(path)
    sizes = task.literal_sizes
    for name, value in {
        "depth": 4,
        "height": 16,
        "width": 16,
        "channels_in": 3,
        "channels_out": 6,
        "kernel_h": 3,
        "kernel_w": 3,
        "n": 4096,
    }.items():
        assert sizes[name] == value, name
    assert "hidden" not in sizes and "a" not in sizes, "expressions are known only once the task runs"


def test_an_override_of_a_chained_or_unpacked_name_changes_it_alone_and_says_so(tmp_path: Path) -> None:
    source = apply_overrides(ASSIGNMENT_FORMS, {"height": 17, "channels_out": 5, "kernel_w": 1})
    scope: dict[str, object] = {}
    exec(source.replace("class Model: pass\n", ""), scope)
    assert (scope["height"], scope["width"], scope["depth"]) == (17, 16, 4)
    assert (scope["channels_in"], scope["channels_out"], scope["kernel_h"], scope["kernel_w"]) == (3, 5, 3, 1)
    assert len(source.splitlines()) == len(ASSIGNMENT_FORMS.splitlines()), "line numbers stay the user's"
    notes = override_notes(ASSIGNMENT_FORMS, {"height": 17, "channels_out": 5, "depth": 2})
    assert notes == [
        "line 3: `height = width = 16` binds width too; the override changes height=17 only",
        "line 4: `channels_in, channels_out = 3, 6` binds channels_in too; the override changes channels_out=5 only",
    ]
    assert override_notes(ASSIGNMENT_FORMS, {"n": 5}) == []
