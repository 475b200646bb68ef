"""Triton API misuse (kope.bugs.api): the edits offered on small kernels that never run, none on the honest one, the
mutation that injects the bug, and the repair search turning a kernel that does not run into one that passes
through the real evaluator (tiny shapes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from kope.agents import DebugConfig, DebugLoop
from kope.bugs.api import missing_imports, runtime_constants
from kope.bugs.cue import detect
from kope.bugs.edit import Program, edits
from kope.bugs.mutation import mutants
from kope.evaluate import EvalOptions, Evaluator
from kope.repair.search import SearchConfig

API = FIXTURES / "api"
OPERATORS = [
    "missing-import",
    "task-global",
    "constexpr-param",
    "constexpr-local",
    "autotune-keyword",
    "arange-block",
    "missing-function",
    "hint-keyword",
    "dtype-call",
    "grid-tuple",
    "helper-jit",
    "skip-continue",
    "block-index",
    "block-slice",
    "flatten-ravel",
    "scalar-tensor",
    "autotune-wrapper",
    "config-dict",
    "carried-type",
    "data-ptr",
    "store-lane",
    "axis-required",
    "host-cast",
    "unset-block",
    "grid-arity",
    "grid-axes",
    "host-jit-call",
    "register-clash",
    "arange-loop",
    "unknown-keyword",
    "hint-call",
    "null-pointer",
]


def program(name: str) -> Program:
    parsed = Program.parse((API / name).read_text())
    assert parsed is not None
    return parsed


def test_the_honest_kernel_gets_no_api_edit_and_no_cue() -> None:
    good = program("rownorm_good.py")
    assert edits(good, OPERATORS) == []
    assert [h.cue for h in detect(good.text, ["runtime-constexpr"])] == []
    assert runtime_constants(good.kernels[0]) == [] and missing_imports(good) == []


def test_a_runtime_block_that_bounds_an_arange_is_annotated_constexpr() -> None:
    broken = program("rownorm_runtime_block.py")
    assert runtime_constants(broken.kernels[0]) == ["BLOCK"]
    assert [h.cue for h in detect(broken.text, ["runtime-constexpr"])] == ["runtime-constexpr"]
    (made,) = edits(broken, OPERATORS)
    assert made.operator == "constexpr-param" and made.grounded and made.label == "api-misuse"
    assert made.source == (API / "rownorm_good.py").read_text()


def test_a_constant_computed_from_a_runtime_parameter_counts_too() -> None:
    text = (
        (API / "rownorm_runtime_block.py")
        .read_text()
        .replace("offs = tl.arange(0, BLOCK)", "HALF = BLOCK // 2\n    offs = tl.arange(0, HALF * 2)")
    )
    parsed = Program.parse(text)
    assert parsed is not None and runtime_constants(parsed.kernels[0]) == ["BLOCK"]


def test_an_arange_over_the_row_width_ranges_over_a_power_of_two_block_instead() -> None:
    (made,) = edits(program("rownorm_width_range.py"), OPERATORS)
    assert made.operator == "arange-block"
    assert "def _row_norm(x_ptr, out_ptr, n_cols, n_cols_BLOCK: tl.constexpr):" in made.source
    assert "offs = tl.arange(0, n_cols_BLOCK)" in made.source
    assert "mask = offs < n_cols\n" in made.source
    assert "_row_norm[(n_rows,)](x, out, n_cols, n_cols_BLOCK=triton.next_power_of_2(n_cols))" in made.source


def test_a_block_the_host_sets_to_a_power_of_two_is_not_taken_for_a_size() -> None:
    text = (
        (API / "rownorm_width_range.py")
        .read_text()
        .replace("_row_norm[(n_rows,)](x, out, n_cols)", "n_cols = 32\n        _row_norm[(n_rows,)](x, out, n_cols)")
    )
    parsed = Program.parse(text)
    assert parsed is not None and edits(parsed, ["arange-block"]) == []


def test_an_autotuned_block_passed_again_is_dropped_from_the_launch_or_the_autotune_is() -> None:
    launch, untuned = edits(program("rownorm_autotune_again.py"), OPERATORS)
    assert {launch.operator, untuned.operator} == {"autotune-keyword"}
    assert "_row_norm[(n_rows,)](x, out, n_cols)\n" in launch.source
    assert "@triton.autotune" in launch.source
    assert "@triton.autotune" not in untuned.source and "BLOCK=triton.next_power_of_2(n_cols)" in untuned.source
    for made in (launch, untuned):
        assert Program.parse(made.source) is not None


def test_a_module_used_but_never_imported_is_imported() -> None:
    (made,) = edits(program("rownorm_no_import.py"), OPERATORS)
    assert made.operator == "missing-import"
    assert "import triton.language as tl\nimport math\n" in made.source
    shadowed = (
        (API / "rownorm_no_import.py")
        .read_text()
        .replace("self.eps = math", "math = __import__('math')\n        self.eps = math")
    )
    parsed = Program.parse(shadowed)
    assert parsed is not None and missing_imports(parsed) == []


TASK_GLOBAL = (
    (API / "rownorm_good.py")
    .read_text()
    .replace(
        "        n_rows, n_cols = x.shape\n",
        "        n_rows = x.shape[0]\n        n_cols = cols  # the task's global\n",
    )
)
"""The row norm reading its width as the task's global `cols`, which the file never binds (`task-global`)."""


def test_a_task_constant_read_as_a_global_is_bound_as_the_task_binds_it(evaluator: Evaluator, tmp_path: Path) -> None:
    """The edit binds `cols` as the task does; the repair passes the task's case of another width too (13: the
    copy is given each case's value)."""
    text = TASK_GLOBAL
    assert "cols  # the task's global" in text
    task = (API / "rownorm_task.py").read_text()
    bare = Program.parse(text)
    assert bare is not None and edits(bare, OPERATORS) == []  # without the task, nothing says what `cols` is
    parsed = Program.parse(text, task)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "task-global" and made.grounded
    assert "import triton.language as tl\ncols = 20\n" in made.source
    for unfit in ("cols = 20\ncols = 30\n", "cols = int('20')\n"):  # bound twice, or not to a literal
        other = Program.parse(text, task.replace("cols = 20\n", unfit))
        assert other is not None and edits(other, ["task-global"]) == []
    for binding in ("cols = 7\n", "try:\n    pass\nexcept ValueError as cols:\n    pass\n"):  # the file binds it
        bound = Program.parse(text.replace("import torch\n", f"import torch\n{binding}"), task)
        assert bound is not None and edits(bound, ["task-global"]) == []
    (tmp_path / "source.py").write_text(text)
    status, accepted, fixed = repair(evaluator, tmp_path, tmp_path / "source.py")
    assert status == "repaired" and accepted == ["task-global"], accepted
    assert "\ncols = 20\n" in fixed


def test_the_mutation_drops_the_constexpr_of_an_aranged_block_and_the_edit_restores_it() -> None:
    good = (API / "rownorm_good.py").read_text()
    (mutant,) = mutants(good, "constexpr-dropped")
    assert mutant.label == "api-misuse" and "BLOCK: tl.constexpr" not in mutant.source
    parsed = Program.parse(mutant.source)
    assert parsed is not None
    assert [e.source for e in edits(parsed, ["constexpr-param"])] == [good]


def repair(
    evaluator: Evaluator, tmp_path: Path, candidate: str | Path, task: Path = API / "rownorm_task.py"
) -> tuple[str, list[str], str]:
    shutil.copy(task, tmp_path / "task.py")
    shutil.copy(API / candidate, tmp_path / "candidate.py")
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=6))
    report = DebugLoop(None, evaluator, config=config).run(
        tmp_path / "task.py", tmp_path / "candidate.py", tmp_path / "fixed.py"
    )
    accepted = [t.operator for r in report.search for t in r.trials if t.verdict == "accepted"]
    return report.status, accepted, (tmp_path / "fixed.py").read_text()


@pytest.mark.parametrize(
    ("candidate", "operator"),
    [
        ("rownorm_width_range.py", "arange-block"),
        ("rownorm_autotune_again.py", "autotune-keyword"),
        ("rownorm_helper_unjitted.py", "helper-jit"),
    ],
)
def test_the_search_repairs_a_kernel_that_never_ran(
    evaluator: Evaluator, tmp_path: Path, candidate: str, operator: str
) -> None:
    status, accepted, fixed = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == [operator], accepted
    assert fixed != (API / candidate).read_text()


def test_a_function_triton_lacks_is_written_with_the_ones_it_has() -> None:
    text = (API / "rownorm_good.py").read_text().replace("x / norm", "tl.tanh(x / norm) + tl.log1p(tl.abs(x))")
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "missing-function" and made.grounded
    assert "(2.0 * tl.sigmoid(2.0 * (x / norm)) - 1.0) + tl.log(1.0 + (tl.abs(x)))" in made.source
    nested = Program.parse(text.replace("tl.tanh(x / norm)", "tl.tanh(tl.log1p(x))"))
    assert nested is not None
    (outer,) = edits(nested, ["missing-function"])
    assert "(2.0 * tl.sigmoid(2.0 * (tl.log1p(x))) - 1.0)" in outer.source


def test_the_rewritten_functions_agree_with_pytorch() -> None:
    import torch

    from kope.bugs.api import WRITTEN_AS

    x = torch.linspace(-30.0, 30.0, 2001, dtype=torch.float32)
    functions = {"sigmoid": torch.sigmoid, "log": torch.log, "exp": torch.exp, "maximum": torch.clamp_min}
    functions |= {"sqrt": torch.sqrt}
    functions |= {"erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil, "abs": torch.abs}
    functions |= {"where": lambda c, a, b: torch.where(c, torch.as_tensor(a), torch.as_tensor(b))}
    names = {"tl": type("tl", (), {k: staticmethod(v) for k, v in functions.items()})}
    checked = {
        "tanh": torch.tanh,
        "log1p": torch.log1p,
        "expm1": torch.expm1,
        "relu": torch.relu,
        "square": torch.square,
        "silu": torch.nn.functional.silu,
        "softplus": torch.nn.functional.softplus,
        "gelu": torch.nn.functional.gelu,
        "sign": torch.sign,
        "trunc": torch.trunc,
        "reciprocal": torch.reciprocal,
        "fast_reciprocal": torch.reciprocal,
        "fast_tanh": torch.tanh,
        "log10": torch.log10,
        "isnan": torch.isnan,
        "isinf": torch.isinf,
        "fast_exp": torch.exp,
        "fast_log": torch.log,
        "fast_sqrt": torch.sqrt,
    }
    for name, reference in checked.items():
        inputs = x.abs() + 0.5 if name in ("log1p", "log10", "fast_log", "fast_sqrt") else x.clamp(max=20.0)
        if name in ("isnan", "isinf"):
            inputs = torch.tensor([0.0, float("nan"), float("inf"), -float("inf"), 1.0])
        written = eval(WRITTEN_AS[name].format("x"), {**names, "x": inputs})
        torch.testing.assert_close(written, reference(inputs), atol=1e-5, rtol=1e-5, equal_nan=True, msg=name)


def test_functions_of_two_arguments_and_libdevice_forms_run_right(evaluator: Evaluator, tmp_path: Path) -> None:
    """`tl.floor_divide`, `tl.fmod`, `tl.pow`, `tl.round`: Triton 3.7 has none of them; written with `//`, `%` and
    libdevice, the kernel passes through the real evaluator (interpreter and the GPU compiler's front end)."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("row = tl.program_id(0)", "row = tl.floor_divide(tl.fmod(tl.program_id(0), 1 << 20), 1)")
        .replace("x / norm, mask=mask)", "tl.pow(x / norm, 1.0) + tl.round(x * 0.0), mask=mask)")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "missing-function"
    assert "row = ((tl.fmod(tl.program_id(0), 1 << 20)) // (1))" in made.source  # the outermost first
    assert "tl.extra.libdevice.pow(x / norm, 1.0) + tl.extra.libdevice.rint(x * 0.0)" in made.source
    candidate = tmp_path / "functions.py"
    candidate.write_text(text)
    status, accepted, fixed = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and set(accepted) <= {"missing-function", "api-together"}, accepted
    assert "(((tl.program_id(0)) % (1 << 20))) // (1))" in fixed


def test_numpy_style_tensor_functions_are_written_with_triton_ones(evaluator: Evaluator, tmp_path: Path) -> None:
    """`tl.full_like`, `tl.ones_like`, `tl.floordiv`, `tl.transpose`, `tl.flatten`, `tl.reduce_max`, `tl.reduce_and`
    (NumPy's and PyTorch's names that real kernels call on `tl`): Triton 3.7 has none of them. Written with
    `tl.full`, `//`, `tl.trans`, `tl.reshape`, `tl.max` and `tl.min`, the kernel passes the real evaluator
    (interpreter and the GPU compiler's front end); before, it is an error."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("row = tl.program_id(0)", "row = tl.floordiv(tl.program_id(0), 1)")
        .replace(
            "x / norm, mask=mask)",
            "tl.flatten(tl.transpose(tl.reshape(x / norm, (1, BLOCK)))) * tl.ones_like(x) + tl.full_like(x, 0.0)"
            " + tl.reduce_max(x * 0.0, 0) * tl.reduce_and(mask), mask=mask)",
        )
    )
    parsed = Program.parse(text)
    assert parsed is not None
    made = edits(parsed, ["missing-function"])
    assert len(made) == 1 and "tl.full((x).shape, 0.0, (x).dtype)" in made[0].source
    assert "row = ((tl.program_id(0)) // (1))" in made[0].source
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(text)
    task = API / "rownorm_task.py"
    assert evaluator.evaluate(task, before, options=EvalOptions(trials=1)).status == "error"
    fixed = made[0].source
    for _ in range(4):  # an outer call is rewritten first; its arguments' calls in the next edits
        again = Program.parse(fixed)
        assert again is not None
        more = edits(again, ["missing-function"])
        if not more:
            break
        fixed = more[0].source
    assert "tl.trans(" in fixed and "tl.transpose" not in fixed
    after.write_text(fixed)
    judged = evaluator.evaluate(task, after, options=EvalOptions(trials=1))
    assert judged.status == "pass", judged.error


def test_a_dtype_called_as_a_function_becomes_a_cast() -> None:
    text = (API / "rownorm_good.py").read_text().replace("+ 1e-6)", "+ tl.float32(1e-6) * tl.float32(n_cols > 0))")
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "dtype-call"
    assert "+ tl.cast(1e-6, tl.float32) * tl.cast(n_cols > 0, tl.float32))" in made.source
    viewed = Program.parse((API / "rownorm_good.py").read_text().replace("x / norm,", "x / tl.view(norm, tl.float32),"))
    assert viewed is not None
    (cast,) = edits(viewed, OPERATORS)
    assert cast.operator == "dtype-call" and "x / tl.cast(norm, tl.float32)," in cast.source


def test_a_grid_that_is_a_number_becomes_a_one_axis_tuple() -> None:
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("_row_norm[(n_rows,)](", "blocks = n_rows * 1\n        _row_norm[blocks](")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "grid-tuple" and "_row_norm[(blocks,)](" in made.source
    assert edits(program("rownorm_good.py"), ["grid-tuple"]) == []


def test_the_recipe_offers_every_edit_of_the_kind() -> None:
    from kope.bugs.recipe import apply

    assert apply("mend-api", (API / "rownorm_runtime_block.py").read_text()) == [(API / "rownorm_good.py").read_text()]


def test_two_broken_rules_are_mended_one_after_the_other(evaluator: Evaluator, tmp_path: Path) -> None:
    """A module never imported hides a runtime block: the import alone still does not run (its error moves from
    loading to the launch), so the search keeps it as a base and annotates the block on top of it."""
    text = (API / "rownorm_no_import.py").read_text().replace("BLOCK: tl.constexpr", "BLOCK")
    (tmp_path / "two_rules.py").write_text(text)
    shutil.copy(API / "rownorm_task.py", tmp_path / "task.py")
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(
        tmp_path / "task.py", tmp_path / "two_rules.py", tmp_path / "fixed.py"
    )
    assert report.status == "repaired", report.search
    trials = [t for r in report.search for t in r.trials]
    moved = [t for t in trials if "its error moved" in t.reason]
    assert [t.operator for t in moved] == ["missing-import"]
    (accepted,) = [t for t in trials if t.verdict == "accepted"]
    assert (accepted.operator, accepted.depth) == ("constexpr-param", 2)
    fixed = (tmp_path / "fixed.py").read_text()
    assert "import math" in fixed and "BLOCK: tl.constexpr" in fixed


def test_a_block_capped_by_a_size_is_capped_by_its_power_of_two(evaluator: Evaluator, tmp_path: Path) -> None:
    """`block = min(1024, n_cols)` is 20 for 20 columns, and `tl.arange(0, 20)` does not compile: the cap is taken of
    the size's power of two, and the kernel runs on every case."""
    capped = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "        _row_norm[(n_rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))",
            "        block = min(1024, n_cols)\n        _row_norm[(n_rows,)](x, out, n_cols, BLOCK=block)",
        )
    )
    parsed = Program.parse(capped)
    assert parsed is not None
    (made,) = edits(parsed, ["capped-block"])
    assert made.grounded and "block = min(1024, triton.next_power_of_2(n_cols))" in made.source
    assert edits(program("rownorm_good.py"), ["capped-block"]) == []
    candidate = tmp_path / "candidate.py"
    candidate.write_text(capped)
    config = DebugConfig(probes=False, search_config=SearchConfig(max_evaluations=8))
    report = DebugLoop(None, evaluator, config=config).run(API / "rownorm_task.py", candidate, tmp_path / "fixed.py")
    assert report.status == "repaired", report.search


def test_a_helper_a_kernel_calls_without_jit_is_jitted_and_a_torch_helper_is_not() -> None:
    text = (API / "rownorm_helper_unjitted.py").read_text()
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "helper-jit" and made.grounded
    assert "@triton.jit\ndef _normalised(x, norm):" in made.source
    hosted = Program.parse(text.replace("tl.maximum(norm, 1e-6)", "torch.clamp(norm, min=1e-6)"))
    assert hosted is not None and edits(hosted, ["helper-jit"]) == []  # PyTorch in it: a host call, not a helper


def test_a_loop_over_tl_static_of_a_range_becomes_the_plain_range(evaluator: Evaluator, tmp_path: Path) -> None:
    """`for k in tl.static(range(2))`: Triton has no `tl.static` ("module 'triton.language' has no attribute
    'static'"); the loop over the range itself is what it means."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("    norm = tl.sqrt(", "    for k in tl.static(range(2)):\n        x = x * 1.0\n    norm = tl.sqrt(")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, ["missing-function"])
    assert "for k in (range(2)):" in made.source
    candidate = tmp_path / "static.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["missing-function"], accepted


def test_tl_any_and_all_are_written_with_reductions_triton_has() -> None:
    import torch

    from kope.bugs.api import WRITTEN_AS

    where = lambda m, a, b: torch.where(m, torch.tensor(a), torch.tensor(b))  # noqa: E731 - tl.where's stand-in
    tl = type("tl", (), {"where": staticmethod(where), "max": torch.max, "min": torch.min})
    for mask in (torch.tensor([False, False]), torch.tensor([True, False]), torch.tensor([True, True])):
        for name, reference in (("any", torch.any), ("all", torch.all)):
            assert bool(eval(WRITTEN_AS[name].format("m"), {"tl": tl, "m": mask})) == bool(reference(mask))


def test_a_continue_in_a_kernels_loop_becomes_a_guard_around_the_rest() -> None:
    source = (FIXTURES / "interpreter" / "loop_continue.py").read_text()
    parsed = Program.parse(source)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "skip-continue" and "continue" not in made.source.split('"""')[-1]
    assert "        if not (step == 2):\n            y += x\n" in made.source
    compile(made.source, "fixed.py", "exec")
    broken = Program.parse(source.replace("            continue", "            break"))
    assert broken is not None
    (guarded,) = edits(broken, ["skip-continue"])
    assert "        if not (step == 2):\n            y += x\n" in guarded.source


def test_the_search_repairs_a_loop_the_gpu_compiler_refuses(evaluator: Evaluator, tmp_path: Path) -> None:
    kernel = FIXTURES / "interpreter" / "loop_continue.py"
    status, accepted, _ = repair(evaluator, tmp_path, kernel, task=FIXTURES / "tasks" / "scale.py")
    assert status == "repaired" and accepted == ["skip-continue"], accepted


def test_autotune_configs_written_as_dicts_become_triton_configs() -> None:
    source = (API / "rownorm_autotune_again.py").read_text()
    dicts = source.replace(
        'configs=[triton.Config({"BLOCK": 32}, num_warps=1), triton.Config({"BLOCK": 64}, num_warps=2)],',
        "configs=CONFIGS,",
    ).replace(
        "@triton.autotune(",
        'CONFIGS = [{"BLOCK": 32, "num_warps": 1}, {"BLOCK": 64, "num_stages": 2}]\n\n\n@triton.autotune(',
    )
    parsed = Program.parse(dicts)
    assert parsed is not None
    made = [e for e in edits(parsed, OPERATORS) if e.operator == "config-dict"]
    assert len(made) == 1 and made[0].grounded
    assert "CONFIGS = [triton.Config({'BLOCK': 32}, num_warps=1), triton.Config({'BLOCK': 64}, num_stages=2)]" in (
        made[0].source
    )


def test_a_block_computed_from_constants_is_annotated_where_triton_needs_a_constant(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`HALF = BLOCK // 2` is a constant to Python and a runtime value to Triton's compiler: the GPU front end refuses
    `tl.arange(0, HALF)` (the interpreter ran it); annotated, the kernel is right."""
    source = (API / "rownorm_good.py").read_text()
    halves = source.replace(
        "    offs = tl.arange(0, BLOCK)\n",
        "    HALF = BLOCK // 2\n    WHOLE = HALF * 2\n    offs = tl.arange(0, WHOLE)\n",
    )
    parsed = Program.parse(halves)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "constexpr-local"
    assert "HALF: tl.constexpr = BLOCK // 2\n    WHOLE: tl.constexpr = HALF * 2\n" in made.source
    candidate = tmp_path / "halves.py"
    candidate.write_text(halves)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["constexpr-local"], accepted


def test_nested_continues_are_mended_outermost_first() -> None:
    """An inner loop's `continue` inside the outer's guarded rest would move under the outer edit: a later round's."""
    source = (FIXTURES / "interpreter" / "loop_continue.py").read_text()
    nested = source.replace(
        "        y += x\n",
        "        for half in range(2):\n            if half == 1:\n                continue\n            y += x\n",
    )
    first = Program.parse(nested)
    assert first is not None
    (outer,) = edits(first, ["skip-continue"])
    second = Program.parse(outer.source)
    assert second is not None
    (inner,) = edits(second, ["skip-continue"])
    assert "continue" not in inner.source.split('"""')[-1]
    assert (
        "            for half in range(2):\n                if not (half == 1):\n                    y += x\n"
        in inner.source
    )


def test_hints_triton_cannot_read_are_dropped_and_others_kept() -> None:
    """`tl.CacheModifier` is no attribute of Triton's language, `".lu"` no cache modifier it accepts: both dropped in
    one edit; a hint it accepts (`".cg"`, `"evict_last"`) and a hint passed as a parameter stay."""
    source = (API / "rownorm_good.py").read_text()
    hinted = source.replace(
        "x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)",
        "x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0, cache_modifier=tl.CacheModifier.CG,\n"
        '        eviction_policy="evict_last")\n'
        '    y = tl.load(x_ptr + row * n_cols + offs, mask=mask, cache_modifier=".cg")',
    ).replace("x / norm, mask=mask)", 'x / norm, mask=mask, cache_modifier=".lu")')
    parsed = Program.parse(hinted)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "hint-keyword" and made.grounded
    assert "CacheModifier" not in made.source and ".lu" not in made.source
    assert 'eviction_policy="evict_last")' in made.source and 'cache_modifier=".cg")' in made.source
    assert "x / norm, mask=mask)" in made.source
    kept = Program.parse(source.replace("mask=mask, other=0.0)", "mask=mask, other=0.0, cache_modifier=HINT)"))
    assert kept is not None and edits(kept, OPERATORS) == []


def test_a_block_indexed_by_a_scalar_is_picked_with_a_masked_sum(evaluator: Evaluator, tmp_path: Path) -> None:
    """`mask[i]`, `x[i]` and `squares[i] = ...` in a loop: the interpreter runs them, Triton's GPU compiler refuses
    them (kope's evaluation says so); the masked sums and the `tl.where` that replace them are right."""
    kernel = API / "rownorm_picked.py"
    parsed = program("rownorm_picked.py")
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "block-index" and made.grounded
    assert "squares = tl.where(tl.arange(0, squares.shape[0]) == (i), " in made.source
    assert "tl.sum(tl.where(tl.arange(0, mask.shape[0]) == i, mask, 0), axis=0).to(mask.dtype)" in made.source
    status, accepted, _ = repair(evaluator, tmp_path, kernel)
    assert status == "repaired" and accepted == ["block-index"], accepted


def test_a_range_sliced_out_of_a_block_is_gathered(evaluator: Evaluator, tmp_path: Path) -> None:
    """`offs[i:i + CHUNK]` and `mask[i:i + CHUNK]` in a loop: the interpreter slices its NumPy blocks, Triton's GPU
    compiler refuses the slice; the one-hot gathers of the same lanes are right."""
    parsed = program("rownorm_sliced.py")
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "block-slice" and made.grounded
    assert "== ((i) + tl.arange(0, CHUNK))[:, None], offs[None, :], 0), axis=1).to(offs.dtype)" in made.source
    assert "[i:i + CHUNK]" not in made.source
    status, accepted, _ = repair(evaluator, tmp_path, "rownorm_sliced.py")
    assert status == "repaired" and accepted == ["block-slice"], accepted


def test_a_slice_whose_width_is_not_stated_is_left() -> None:
    """`offs[i:j]` (the width not in the slice's text), a step, a broadcast: no gather is guessed."""
    source = (API / "rownorm_sliced.py").read_text()
    for form in ("offs[i:n_cols]", "offs[i:i + CHUNK:2]", "offs[:, None]"):
        parsed = Program.parse(source.replace("offs[i:i + CHUNK]", form).replace("mask[i:i + CHUNK]", "mask"))
        assert parsed is not None
        assert [e.operator for e in edits(parsed, OPERATORS)] == [], form


def test_what_triton_indexes_itself_is_no_block_index() -> None:
    """A broadcast (`x[:, None]`), a tuple indexed in a static loop, a block indexed by a block (a gather): none
    is a scalar pick."""
    source = (API / "rownorm_good.py").read_text()
    kept = source.replace(
        "    norm = tl.sqrt(",
        "    col = x[:, None]\n    pair = (row, n_cols)\n    for k in tl.static_range(2):\n        row += pair[k]\n"
        "    norm = tl.sqrt(",
    )
    parsed = Program.parse(kept)
    assert parsed is not None
    assert [e.operator for e in edits(parsed, OPERATORS)] == []


def test_blocks_flattened_the_pytorch_way_are_raveled(evaluator: Evaluator, tmp_path: Path) -> None:
    """`x.flatten()` (no such method on Triton's blocks) and `tl.reshape(m, (-1,))` (no `-1` in Triton's shapes)
    fail on every input; `tl.ravel` is what they mean."""
    source = (API / "rownorm_good.py").read_text()
    flat = source.replace(
        "    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)\n",
        "    offs = offs[None, :].flatten()\n    mask = tl.reshape(mask[:, None], (-1,))\n"
        "    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)\n",
    )
    parsed = Program.parse(flat)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "flatten-ravel" and made.grounded
    assert "offs = tl.ravel(offs[None, :])" in made.source and "mask = tl.ravel(mask[:, None])" in made.source
    candidate = tmp_path / "flat.py"
    candidate.write_text(flat)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["flatten-ravel"], accepted


def _eps_from_host(source: str, host: str) -> str:
    """The row norm with its epsilon a kernel parameter, which the host computes with `host` before the launch."""
    launch = "_row_norm[(n_rows,)](x, out, n_cols, BLOCK"
    return (
        source.replace("n_cols, BLOCK: tl.constexpr)", "n_cols, eps, BLOCK: tl.constexpr)")
        .replace("+ 1e-6)", "+ eps)")
        .replace(launch, host + "        " + launch.replace("n_cols, BLOCK", "n_cols, eps, BLOCK"))
    )


def test_a_number_passed_as_a_zero_d_tensor_is_passed_as_a_number(evaluator: Evaluator, tmp_path: Path) -> None:
    """`eps = torch.tensor(1e-6)` reaches the kernel as a pointer, and `x / pointer` fails on every input; the
    launch passes `eps.item()`. A tensor the kernel loads from stays as it is."""
    source = (API / "rownorm_good.py").read_text()
    eps = _eps_from_host(source, "eps = torch.tensor(1e-6, dtype=x.dtype)\n")
    parsed = Program.parse(eps)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "scalar-tensor" and made.grounded
    assert "_row_norm[(n_rows,)](x, out, n_cols, eps.item(), BLOCK" in made.source
    candidate = tmp_path / "eps.py"
    candidate.write_text(eps)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["scalar-tensor"], accepted
    one = "x = torch.tensor(1.0)\n        _row_norm[(n_rows,)](x,"
    loaded = Program.parse(source.replace("_row_norm[(n_rows,)](x,", one))
    assert loaded is not None and edits(loaded, OPERATORS) == []


def test_a_one_element_tensor_computed_from_tensors_is_loaded_in_the_kernel(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`eps = torch.sqrt(buf[0]).clamp(min=...)` of a one-element buffer reaches the kernel as a pointer: `.item()`
    would read a value computed from tensors into Python (the judge rejects that), so the kernel reads it with
    `tl.load` instead."""
    eps = _eps_from_host(
        (API / "rownorm_good.py").read_text(),
        "buf = torch.full((1,), 1e-12, dtype=x.dtype)\n        eps = torch.sqrt(buf[0])\n"
        "        eps = eps.clamp(min=1e-6)\n",
    )
    parsed = Program.parse(eps)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "scalar-tensor" and made.grounded
    assert "    eps = tl.load(eps)\n    row = tl.program_id(0)" in made.source and ".item()" not in made.source
    candidate = tmp_path / "eps.py"
    candidate.write_text(eps)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["scalar-tensor"], accepted
    many = Program.parse(eps.replace("torch.full((1,), ", "torch.full((2,), "))
    assert many is not None and edits(many, OPERATORS) == []


def test_a_continue_inside_an_if_that_ends_the_loop_guards_the_rest_of_its_block() -> None:
    """`if A: (if C: continue) rest`: the rest of the `if A` block goes under `if not (C):`; where something
    follows the `if A` in the loop, a `continue` would skip it too, and no guard of its block says so: no edit."""
    source = (FIXTURES / "interpreter" / "loop_continue.py").read_text()
    nested = source.replace(
        "        if step == 2:\n            continue\n        y += x\n",
        "        if step >= 0:\n            if step == 2:\n                continue\n            y += x\n",
    )
    parsed = Program.parse(nested)
    assert parsed is not None
    (made,) = edits(parsed, ["skip-continue"])
    assert "        if step >= 0:\n            if not (step == 2):\n                y += x\n" in made.source
    followed = Program.parse(
        nested.replace(
            "                continue\n            y += x\n",
            "                continue\n            y += x\n        y += 0.0\n",
        )
    )
    assert followed is not None and edits(followed, ["skip-continue"]) == []
    broken = Program.parse(nested.replace("continue", "break"))
    assert broken is not None and edits(broken, ["skip-continue"]) == []


def test_an_autotune_over_a_plain_launching_function_wraps_the_kernel(evaluator: Evaluator, tmp_path: Path) -> None:
    """`@triton.autotune` on a plain function that only launches the kernel fails on every input ("'function'
    object has no attribute 'arg_names'"); the autotune wraps the kernel itself."""
    source = (API / "rownorm_good.py").read_text()
    wrapped = source.replace(
        "        _row_norm[(n_rows,)](x, out",
        "        @triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)], "
        'key=["n_cols"])\n'
        "        def tuned(grid, *args, **kwargs):\n"
        '            """Tuned launch."""\n'
        "            return _row_norm[grid](*args, **kwargs)\n\n"
        "        tuned[(n_rows,)](x, out",
    )
    parsed = Program.parse(wrapped)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "autotune-wrapper" and made.grounded
    assert (
        "        tuned = triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)], "
        'key=["n_cols"])(_row_norm)\n\n        tuned[(n_rows,)]' in made.source
    )
    candidate = tmp_path / "wrapped.py"
    candidate.write_text(wrapped)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["autotune-wrapper"], accepted


def test_a_launch_through_an_autotuned_alias_stops_passing_what_a_named_config_list_sets() -> None:
    """`configs = [...]` in the host function, `tuned = triton.autotune(configs=configs, ...)(kernel)`, then
    `tuned[grid](..., BLOCK=...)`: the launch is the kernel's, and BLOCK is the configs' to set."""
    source = (API / "rownorm_good.py").read_text()
    aliased = source.replace(
        "        _row_norm[(n_rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))",
        '        configs = [triton.Config({"BLOCK": 64}, num_warps=1)]\n'
        '        tuned = triton.autotune(configs=configs, key=["n_cols"])(_row_norm)\n'
        "        tuned[(n_rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))",
    )
    parsed = Program.parse(aliased)
    assert parsed is not None
    assert [site.kernel.name for site in parsed.parsed.launches] == ["_row_norm"]
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "autotune-keyword"
    assert "        tuned[(n_rows,)](x, out, n_cols)\n" in made.source


def test_a_window_ranged_over_then_picked_by_a_loop_index_takes_two_edits(evaluator: Evaluator, tmp_path: Path) -> None:
    """`taps = tl.arange(0, n_taps)` over a runtime window of 3 (no power of two, no constant: the GPU compiler refuses
    it) and `taps[t]` in `for t in range(n_taps)`: the range goes over a power-of-two block (`arange-block`), then
    the pick becomes a masked sum (`block-index`); the search chains them."""
    source = (API / "rownorm_good.py").read_text()
    window = (
        source.replace("n_cols, BLOCK: tl.constexpr)", "n_cols, n_taps, BLOCK: tl.constexpr)")
        .replace(
            "    norm = tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)\n",
            "    taps = tl.arange(0, n_taps) * 0 + 1\n    count = 0\n    for t in range(n_taps):\n"
            "        count += taps[t]\n    norm = tl.sqrt(tl.sum(x * x, axis=0) * count / n_taps + 1e-6)\n",
        )
        .replace("(x, out, n_cols, BLOCK", "(x, out, n_cols, n_taps, BLOCK")
        .replace(
            "        n_rows, n_cols = x.shape\n", "        n_rows, n_cols = x.shape\n        n_taps = x.dim() + 1\n"
        )
    )
    parsed = Program.parse(window)
    assert parsed is not None
    assert {e.operator for e in edits(parsed, OPERATORS)} == {"constexpr-param", "arange-block", "block-index"}
    candidate = tmp_path / "window.py"
    candidate.write_text(window)
    status, _, fixed = repair(evaluator, tmp_path, candidate)
    assert status == "repaired"
    assert "tl.arange(0, n_taps_BLOCK)" in fixed and "taps[t]" not in fixed


def test_two_runtime_windows_are_ranged_over_blocks_in_one_edit_first() -> None:
    source = (API / "rownorm_good.py").read_text()
    windows = (
        source.replace("n_cols, BLOCK: tl.constexpr)", "n_cols, kh, kw, BLOCK: tl.constexpr)")
        .replace(
            "    norm = tl.sqrt(",
            "    taps = tl.arange(0, kh)[:, None] + tl.arange(0, kw)[None, :]\n    norm = tl.sqrt(",
        )
        .replace("(x, out, n_cols, BLOCK", "(x, out, n_cols, self.kh, self.kw, BLOCK")
    )
    parsed = Program.parse(windows)
    assert parsed is not None
    both, *each = [e for e in edits(parsed, OPERATORS) if e.operator == "arange-block"]
    assert "tl.arange(0, kh_BLOCK)[:, None] + tl.arange(0, kw_BLOCK)[None, :]" in both.source
    assert "kh_BLOCK=triton.next_power_of_2(self.kh), kw_BLOCK=triton.next_power_of_2(self.kw))" in both.source
    assert len(each) == 2


def test_a_kernel_of_long_chains_of_names_is_read_in_linear_time() -> None:
    """A hostile kernel that makes each of 300 names from all the names before it: reading what each holds once
    keeps the scalar-pick check linear (a depth-limited walk would branch 300-fold at every step)."""
    source = (API / "rownorm_good.py").read_text()
    chain = "".join(f"    v{i} = {' + '.join(f'v{j}' for j in range(max(0, i - 40), i)) or 'x'}\n" for i in range(300))
    hostile = source.replace("    norm = tl.sqrt(", chain + "    y = v299[row]\n    norm = tl.sqrt(")
    parsed = Program.parse(hostile)
    assert parsed is not None
    made = [e for e in edits(parsed, OPERATORS) if e.operator == "block-index"]
    assert len(made) == 1 and "tl.arange(0, v299.shape[0]) == row" in made[0].source


CARRIED_ERROR = (
    "runtime: forward failed on trial 0: GpuCompileError: Triton's GPU compiler refuses `_row_norm`: "
    'AssertionError("Loop-carried variable {name} has initial type int32 but is re-assigned to {became} in loop! '
    'Please make sure that the type stays consistent.") (candidate line {line}: for step in range(2):)'
)


def _carried(init: str, update: str, use: str) -> str:
    return (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "    norm = tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)\n",
            f"    {init}\n    for step in range(2):\n        {update}\n    norm = tl.sqrt({use} / 2 + 1e-6)\n",
        )
    )


def test_a_variable_a_loop_gives_another_type_starts_as_that_type(evaluator: Evaluator, tmp_path: Path) -> None:
    """`acc = 0` then `acc += x * x` in a loop: Triton's GPU compiler refuses the int32 that becomes a block of
    fp32. Its message states the type; the edit starts `acc` as that block, of a shape the kernel writes."""
    text = _carried("acc = 0", "acc += x * x", "tl.sum(acc, axis=0)")
    silent = Program.parse(text)
    assert silent is not None and edits(silent, ["carried-type"]) == []  # no message, no edit: the compiler's type
    line = text.splitlines().index("    for step in range(2):") + 1
    error = CARRIED_ERROR.format(name="acc", became="<['128'], fp32>", line=line)
    parsed = Program.parse(text, error=error)
    assert parsed is not None
    (made,) = edits(parsed, ["carried-type"])
    assert made.grounded and "    acc = tl.full((BLOCK,), 0, tl.float32)\n" in made.source
    candidate = tmp_path / "carried.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["carried-type"], accepted


def test_a_scalar_takes_the_messages_type_and_a_block_that_changes_shape_is_left_alone() -> None:
    text = _carried("total = 0", "total += tl.sum(x * x, axis=0)", "total")
    line = text.splitlines().index("    for step in range(2):") + 1
    parsed = Program.parse(text, error=CARRIED_ERROR.format(name="total", became="fp32", line=line))
    assert parsed is not None
    (made,) = edits(parsed, ["carried-type"])
    assert "    total = tl.full((), 0, tl.float32)\n" in made.source
    aliased = CARRIED_ERROR.format(name="total", became="fp32", line=line).replace("`_row_norm`", "`tuned`")
    assert [e.source for e in edits(Program.parse(text, error=aliased) or parsed, ["carried-type"])] == [made.source]
    reshaped = CARRIED_ERROR.format(name="acc", became="<['16', '16', '4'], fp32>", line=line).replace(
        "initial type int32", "initial type <['16', '4'], fp32>"
    )
    block = Program.parse(_carried("acc = tl.zeros((16, 4), dtype=tl.float32)", "acc += x", "acc"), error=reshaped)
    assert block is not None and edits(block, ["carried-type"]) == []  # a shape bug, not a type the start can take
    elsewhere = Program.parse(text, error=CARRIED_ERROR.format(name="total", became="fp32", line=line + 1))
    assert elsewhere is not None and edits(elsewhere, ["carried-type"]) == []  # no loop at the line it names
    written = "Loop-carried variable total has initial type " * 50_000  # a message the candidate's code raised
    assert edits(Program.parse(text, error=written) or parsed, ["carried-type"]) == []


def test_an_address_passed_as_an_integer_is_passed_as_the_tensor(evaluator: Evaluator, tmp_path: Path) -> None:
    """`x.data_ptr()` reaches a Triton kernel as an int64, which it cannot load from ("Unsupported ptr type"); the
    launch passes the tensor, also through a name the host bound it to."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "_row_norm[(n_rows,)](x, out,",
            "out_addr = out.data_ptr()\n        _row_norm[(n_rows,)](x.data_ptr(), out_addr,",
        )
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "data-ptr" and made.grounded
    assert "out_addr = out\n        _row_norm[(n_rows,)](x, out_addr," in made.source
    offset = Program.parse(text.replace("out_addr = out.data_ptr()", "out_addr = out.data_ptr() + 0"))
    assert offset is not None  # an address in arithmetic: the tensor would be added to, not addressed
    assert "out_addr = out.data_ptr() + 0" in next(e.source for e in edits(offset, ["data-ptr"]))
    candidate = tmp_path / "addr.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["data-ptr"], accepted


def test_a_reduction_without_its_required_axis_reduces_the_whole_block() -> None:
    """`tl.reduce_or(mask)` lacks the axis Triton 3.7 requires of it; `tl.program_id(0)` gives its axis positionally
    and `tl.sum(x)` has a default: neither is touched."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("    mask = offs < n_cols\n", "    mask = (offs < n_cols) & tl.reduce_or(offs < n_cols)\n")
        .replace("tl.sum(x * x, axis=0)", "tl.sum(x * x)")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "axis-required"
    assert "tl.reduce_or(offs < n_cols, axis=None)" in made.source and "tl.program_id(0)\n" in made.source


def test_pythons_casts_of_runtime_values_in_a_kernel_become_triton_casts() -> None:
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "x / norm, mask=mask)", "x / norm * float(n_cols) / float(n_cols) * float(BLOCK) / int(BLOCK), mask=mask)"
        )
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "host-cast"
    assert "tl.cast(n_cols, tl.float32) / tl.cast(n_cols, tl.float32) * float(BLOCK) / int(BLOCK)" in made.source


def test_a_scalar_parameters_to_becomes_a_cast_where_an_argument_of_one_had_no_to() -> None:
    """`n_cols.to(tl.float32)` runs while `n_cols` is a runtime integer; Triton makes an argument of 1 a constant,
    which has no `.to`: where the run stopped on that, the call becomes `tl.cast`; before any such error, nothing."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("x / norm, mask", "x / norm * n_cols.to(tl.float32) / n_cols, mask")
    )
    stopped = Program.parse(text, error="AttributeError(\"'int' object has no attribute 'to'\")")
    assert stopped is not None
    (made,) = edits(stopped, ["host-cast"])
    assert "x / norm * tl.cast(n_cols, tl.float32) / n_cols" in made.source and made.grounded
    ran = Program.parse(text)
    assert ran is not None and edits(ran, ["host-cast"]) == []


def test_a_block_of_one_stored_through_one_address_is_stored_through_one_lane() -> None:
    """A running maximum kept as a block of one (`tl.full((1,), ...)`) stored to `out_ptr + row`: where the run
    stopped on the compiler's "Value argument cannot be block type if pointer argument is not a block" at that
    store, its address becomes a block of one lane; without that error, nothing."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "    tl.store(out_ptr + row * n_cols + offs, x / norm, mask=mask)",
            "    tl.store(out_ptr + row * n_cols + offs, x / norm, mask=mask)\n"
            "    top = tl.full((1,), 0.0, tl.float32)\n"
            "    top = tl.maximum(top, tl.max(x, axis=0))\n"
            "    tl.store(out_ptr + row, top)",
        )
    )
    line = text.splitlines().index("    tl.store(out_ptr + row, top)") + 1
    message = f"Value argument cannot be block type if pointer argument is not a block (candidate line {line}: tl.store"
    stopped = Program.parse(text, error=message)
    assert stopped is not None
    (made,) = edits(stopped, ["store-lane"])
    assert "    tl.store(out_ptr + row + tl.arange(0, 1), top)" in made.source and made.grounded
    ran = Program.parse(text)
    assert ran is not None and edits(ran, ["store-lane"]) == []


def test_a_block_size_no_launch_passes_is_passed(evaluator: Evaluator, tmp_path: Path) -> None:
    """A launch that leaves `BLOCK` unset, with no default and no autotune config setting it ("missing 1 required
    positional argument: 'BLOCK'"), passes a power of two; a kernel whose autotune sets it gets no such edit."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("(x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))", "(\n            x, out, n_cols,\n        )")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "unset-block" and made.grounded
    assert "(\n            x, out, n_cols, BLOCK=1024,\n        )" in made.source
    commented = Program.parse(text.replace("n_cols,\n        )", "n_cols  # the row\n        )"))
    assert commented is not None
    assert "x, out, n_cols, BLOCK=1024  # the row\n" in edits(commented, ["unset-block"])[0].source
    candidate = tmp_path / "unset.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["unset-block"], accepted
    again = (API / "rownorm_autotune_again.py").read_text()
    tuned = Program.parse(again.replace(", BLOCK=triton.next_power_of_2(n_cols))", ")"))
    assert tuned is not None and tuned.text != again and edits(tuned, ["unset-block"]) == []


def test_a_grid_function_of_sizes_is_called_with_the_launchs_own(evaluator: Evaluator, tmp_path: Path) -> None:
    """A launch grid written as a function of the meta-parameters and a size (`def grid(meta, N_COLS)`; Triton passes
    the meta-parameters alone) is called with the launch's argument for the kernel parameter of that name, case
    aside; a grid whose extra name matches no parameter gets no edit."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "        _row_norm[(n_rows,)](x, out, n_cols,",
            "        def tiles(meta, N_COLS):\n"
            "            return (n_rows + 0 * triton.cdiv(N_COLS, meta['BLOCK']),)\n\n"
            "        _row_norm[tiles](x, out, n_cols,",
        )
    )
    parsed = Program.parse(text)
    assert parsed is not None and "[tiles]" in text
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "grid-arity" and made.grounded
    assert "_row_norm[(lambda meta: tiles(meta, n_cols))](x, out, n_cols," in made.source
    unmatched = Program.parse(text.replace("meta, N_COLS)", "meta, width)"))
    assert unmatched is not None and edits(unmatched, ["grid-arity"]) == []
    candidate = tmp_path / "arity.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["grid-arity"], accepted


def test_every_broken_rule_is_mended_in_one_version_too() -> None:
    """A module never imported and a runtime block: besides each edit alone (the search's rounds), one version with
    both, so that a kernel breaking several rules does not pay a full round for each."""
    text = (API / "rownorm_no_import.py").read_text().replace("BLOCK: tl.constexpr", "BLOCK")
    parsed = Program.parse(text)
    assert parsed is not None
    (together,) = edits(parsed, ["api-together"])
    assert together.grounded and together.description.endswith("missing-import, constexpr-param")
    assert "BLOCK: tl.constexpr" in together.source and together.source.count("import") == text.count("import") + 1
    alone = Program.parse((API / "rownorm_runtime_block.py").read_text())
    assert alone is not None and edits(alone, ["api-together"]) == []  # one rule: the edit alone is the version


def test_functions_looked_for_in_the_wrong_module_are_called_where_triton_has_them() -> None:
    """`tl.libdevice.erf` (an older Triton's), `tl.math.maximum` (on `tl`), `tl.math.trunc` (nowhere: written out);
    `tl.math.rsqrt` and `tl.erf` exist as called and stay."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "x / norm, mask=mask)",
            "tl.math.maximum(x / norm, -9.0) + tl.libdevice.erf(x) * tl.math.trunc(x * 0.0), mask=mask)",
        )
        .replace("norm = tl.sqrt(", "norm = tl.erf(x * 0.0) + 1.0 / tl.math.rsqrt(")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, ["missing-function"])
    assert "tl.maximum(x / norm, -9.0) + tl.erf(x) * tl.where((x * 0.0) >= 0" in made.source
    assert "norm = tl.erf(x * 0.0) + 1.0 / tl.math.rsqrt(" in made.source


def test_a_grid_of_four_axes_is_folded_into_three(evaluator: Evaluator, tmp_path: Path) -> None:
    """`tl.program_id(3)` over a four-axis grid: the interpreter runs it, Triton's GPU compiler refuses it ("program_id
    axis must be 0, 1, or 2 but got 3"). Axis 3 folds into axis 0, its count written with the kernel's own names
    (`triton.cdiv(width, META["BLOCK_W"])` is `tl.cdiv(W, BLOCK_W)` in the kernel), and the version runs right."""
    parsed = program("scale4d_four_axes.py")
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "grid-axes" and made.grounded
    assert "b = (tl.program_id(0) // (tl.cdiv(W, BLOCK_W)))" in made.source
    assert "wb = (tl.program_id(0) % tl.cdiv(W, BLOCK_W))" in made.source
    assert 'lambda META: ((batch) * (triton.cdiv(width, META["BLOCK_W"])), channels, triton.cdiv(' in made.source
    status, accepted, fixed = repair(evaluator, tmp_path, "scale4d_four_axes.py", API / "scale4d_task.py")
    assert status == "repaired" and accepted == ["grid-axes"], accepted
    assert "program_id(3)" not in fixed
    unknown = Program.parse(parsed.text.replace("height, width, BLOCK_H", "height, width + 0, BLOCK_H"))
    assert unknown is not None and edits(unknown, ["grid-axes"]) == []  # `width` reaches the kernel as no name


def test_a_device_function_called_on_the_host_is_called_in_its_host_form(evaluator: Evaluator, tmp_path: Path) -> None:
    """`tl.cdiv(...)` in the launch's grid ("Cannot call @triton.jit'd outside of the scope of a kernel" on a GPU, and
    in kope's interpreter): `triton.cdiv(...)`; `tl.maximum` on the host is Python's `max`; a `tl.` call in a kernel
    stays."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("_row_norm[(n_rows,)]", "_row_norm[(tl.cdiv(n_rows, 1),)]")
        .replace("BLOCK=triton.next_power_of_2(n_cols))", "BLOCK=tl.maximum(triton.next_power_of_2(n_cols), 16))")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "host-jit-call" and made.grounded
    assert "_row_norm[(triton.cdiv(n_rows, 1),)]" in made.source
    assert "BLOCK=max(triton.next_power_of_2(n_cols), 16))" in made.source
    assert "tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)" in made.source
    candidate = tmp_path / "host.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["host-jit-call"], accepted


def test_numpy_spellings_triton_lacks_are_written_with_tritons() -> None:
    """`tl.clip`, `tl.astype`, `tl.newaxis` (NumPy's names) and `tl.math.recip`: `tl.clamp`, `.to`, `None`, `1 / x`."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "    norm = tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)\n",
            "    x = tl.astype(tl.clip(x, -1e6, 1e6), tl.float32)\n"
            "    norm = tl.math.recip(tl.math.rsqrt(tl.sum((x[tl.newaxis, :] * x[tl.newaxis, :]), axis=1) + 1e-6))\n",
        )
    )
    parsed = Program.parse(text)
    for _ in range(3):  # nested calls are mended outermost first, one round each
        assert parsed is not None
        made = edits(parsed, ["missing-function"])
        parsed = Program.parse(made[0].source) if made else parsed
    assert parsed is not None and edits(parsed, ["missing-function"]) == []
    assert "x = (tl.clamp(x, -1e6, 1e6)).to(tl.float32)" in parsed.text
    assert "(1.0 / (tl.math.rsqrt(tl.sum((x[None, :] * x[None, :]), axis=1) + 1e-6)))" in parsed.text


def test_a_flag_then_a_parameter_of_its_name_keeps_the_parameter(evaluator: Evaluator, tmp_path: Path) -> None:
    """`self.bias = bias` then `self.register_parameter("bias", None)`: PyTorch refuses ("attribute 'bias' already
    exists"), the plain assignment goes; two tensors of one name are left alone."""
    init = (
        "class ModelNew(nn.Module):\n    def __init__(self, bias=False):\n        super().__init__()\n"
        "        self.bias = bias\n        if bias:\n            self.bias = nn.Parameter(torch.zeros(1))\n"
        "        else:\n            self.register_parameter('bias', None)\n\n"
    )
    text = (API / "rownorm_good.py").read_text().replace("class ModelNew(nn.Module):\n", init)
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "register-clash" and "        pass\n        if bias:" in made.source
    tensors = Program.parse(text.replace("self.bias = bias\n", "self.bias = torch.zeros(1)\n"))
    assert tensors is not None and edits(tensors, ["register-clash"]) == []
    candidate = tmp_path / "clash.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["register-clash"], accepted


def test_an_autotune_over_a_host_function_that_does_more_than_launch_is_dropped(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`@triton.autotune` on a host function that prepares its tensors and launches with its own block ("'function'
    object has no attribute 'arg_names'"): the decorator goes, the launch's values stay."""
    host = (
        "@triton.autotune(configs=[triton.Config({'BLOCK': 32})], key=['n_cols'])\n"
        "def row_norm(x):\n    x = x.contiguous()\n    out = torch.empty_like(x)\n    n_rows, n_cols = x.shape\n"
        "    _row_norm[(n_rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))\n    return out\n\n\n"
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return row_norm(x)\n"
    )
    good = (API / "rownorm_good.py").read_text()
    text = good[: good.index("class ModelNew")] + host
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "autotune-wrapper" and "@triton.autotune" not in made.source
    assert "\n\n\ndef row_norm(x):\n" in made.source
    candidate = tmp_path / "host_tuned.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["autotune-wrapper"], accepted


def test_a_loop_over_a_blocks_lanes_loops_over_a_range(evaluator: Evaluator, tmp_path: Path) -> None:
    """`for c in tl.arange(0, BLOCK):` (the GPU compiler takes only `range` and `static_range` iterators): the loop
    runs over `range(0, BLOCK)`, and the version runs right."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "    norm = tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)\n",
            "    total = 0.0\n    for c in tl.arange(0, BLOCK):\n"
            "        v = tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=0.0)\n        total += v * v\n"
            "    norm = tl.sqrt(total + 1e-6)\n",
        )
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, OPERATORS)
    assert made.operator == "arange-loop" and "    for c in range(0, BLOCK):\n" in made.source
    candidate = tmp_path / "lanes.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["arange-loop"], accepted


def test_a_keyword_the_callee_does_not_take_is_dropped_from_its_calls(evaluator: Evaluator, tmp_path: Path) -> None:
    """`triton.Config(..., num_consumer_groups=2)` in every config ("Config.__init__() got an unexpected keyword
    argument 'num_consumer_groups'"): dropped from each config, read from the error; no error, no edit; the search
    repairs it."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "@triton.jit\n",
            "@triton.autotune(\n    configs=[\n        triton.Config({}, num_warps=4, num_consumer_groups=2),\n"
            "        triton.Config({}, num_consumer_groups=0,\n                      num_warps=2),\n    ],\n"
            "    key=['n_cols'],\n)\n@triton.jit\n",
        )
    )
    error = (
        "executing the candidate module failed: TypeError: Config.__init__() got an unexpected keyword argument "
        "'num_consumer_groups' (candidate line 9: triton.Config({}, num_warps=4, num_consumer_groups=2),)"
    )
    silent = Program.parse(text)
    assert silent is not None and edits(silent, ["unknown-keyword"]) == []
    parsed = Program.parse(text, error=error)
    assert parsed is not None
    (made,) = edits(parsed, ["unknown-keyword"])
    assert made.grounded and "num_consumer_groups" not in made.source
    assert "triton.Config({}, num_warps=4)," in made.source and "triton.Config({},\n    " in made.source
    candidate = tmp_path / "consumer.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["unknown-keyword"], accepted


def test_numpy_keyword_names_on_triton_reductions_are_renamed_not_dropped(evaluator: Evaluator, tmp_path: Path) -> None:
    """`tl.sum(..., keepdims=True)` (NumPy's name; Triton's is `keep_dims`): `keyword-spelling` renames it (grounded,
    with or without an error naming it); `unknown-keyword`'s drop is offered too, not grounded (it changes the
    result's shape); the search repairs the kernel with the rename. `tl.sort(x, dim=0)` is Triton's own spelling."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "norm = tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)",
            "norm = tl.sqrt(tl.sum(x * x, axis=0, keepdims=True) + 1e-6)",
        )
    )
    assert "keepdims=True" in text
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "keepdims" in row)
    error = (
        "forward failed on trial 0: GpuCompileError: Triton's GPU compiler refuses `_row_norm`: TypeError(\"sum() got"
        f" an unexpected keyword argument 'keepdims'\") (candidate line {line}: norm = tl.sqrt(...))"
    )
    for given in ("", error):
        parsed = Program.parse(text, error=given)
        assert parsed is not None
        (renamed,) = edits(parsed, ["keyword-spelling"])
        assert renamed.grounded and "tl.sum(x * x, axis=0, keep_dims=True)" in renamed.source
    (dropped,) = edits(parsed, ["unknown-keyword"])
    assert not dropped.grounded and "tl.sum(x * x, axis=0)" in dropped.source
    sorted_ = Program.parse(text.replace("keepdims=True", "keep_dims=True").replace("x * x", "tl.sort(x * x, dim=0)"))
    assert sorted_ is not None and edits(sorted_, ["keyword-spelling"]) == []
    candidate = tmp_path / "keepdims.py"
    candidate.write_text(text)
    status, accepted, fixed = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["keyword-spelling"] and "keep_dims=True" in fixed, accepted


def test_a_keyword_given_a_value_of_the_wrong_type_is_dropped_where_the_error_names_it() -> None:
    text = (API / "rownorm_good.py").read_text()
    assert "out = torch.empty_like(x)" in text
    text = text.replace("out = torch.empty_like(x)", "out = torch.empty_like(x, layout=torch.contiguous_format)")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "layout=" in row)
    error = (
        "forward failed on trial 0: TypeError: empty_like(): argument 'layout' must be torch.layout, not "
        f"torch.memory_format (candidate line {line}: out = torch.empty_like(x, layout=torch.contiguous_format))"
    )
    parsed = Program.parse(text, error=error)
    assert parsed is not None
    (made,) = edits(parsed, ["unknown-keyword"])
    assert made.grounded and "out = torch.empty_like(x)\n" in made.source
    assert "a value of a type it does not take" in made.description
    silent = Program.parse(text)
    assert silent is not None and edits(silent, ["unknown-keyword"]) == []


def test_hints_triton_refuses_become_their_argument_and_unread_calls_it_lacks_go(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`tl.multiple_of(BLOCK, 8)` over a constant (Triton's GPU compiler refuses it) and `tl.assume_aligned(x_ptr,
    16)`, a statement calling what Triton does not have: the hint becomes its argument, the statement `pass`; a hint
    Triton takes where the error is not stays; the search repairs it (`width`, now `BLOCK`, also wants its
    `tl.constexpr`: the two edits together)."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace(
            "    offs = tl.arange(0, BLOCK)\n",
            "    tl.assume_aligned(x_ptr, 16)\n    width = tl.multiple_of(BLOCK, 8)\n"
            "    offs = tl.max_contiguous(tl.arange(0, width), BLOCK)\n",
        )
    )
    parsed = Program.parse(
        text,
        error="AttributeError(\"'constexpr' object has no attribute 'shape'\") "
        "(candidate line 10: width = tl.multiple_of(BLOCK, 8))",
    )
    assert parsed is not None
    (made,) = edits(parsed, ["hint-call"])
    assert made.grounded and "    pass\n    width = BLOCK\n" in made.source
    assert "tl.max_contiguous(tl.arange(0, width), BLOCK)" in made.source
    candidate = tmp_path / "hinted.py"
    candidate.write_text(text)
    status, accepted, fixed = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted in (["hint-call"], ["api-together"]), accepted  # with constexpr-local
    assert "assume_aligned" not in fixed and "multiple_of" not in fixed


def test_a_pointer_compared_with_zero_is_tested_against_none_and_passed_none(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`if b_ptr != 0:` in the kernel (Triton's compiler refuses a pointer compared with an int) and `0` passed for
    the missing tensor: `b_ptr is not None`, and the launch passes `None`; the search repairs it."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("(x_ptr, out_ptr, n_cols,", "(x_ptr, b_ptr, out_ptr, n_cols,")
        .replace(
            "    norm = tl.sqrt(",
            "    if b_ptr != 0:\n        x = x + tl.load(b_ptr + offs, mask=mask, other=0.0)\n    norm = tl.sqrt(",
        )
        .replace("        n_rows, n_cols = x.shape\n", "        n_rows, n_cols = x.shape\n        b = None\n")
        .replace("](x, out, n_cols,", "](x, b if b is not None else 0, out, n_cols,")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, ["null-pointer"])
    assert made.grounded and "    if b_ptr is not None:\n" in made.source
    assert "](x, b if b is not None else None, out, n_cols," in made.source
    candidate = tmp_path / "null.py"
    candidate.write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, candidate)
    assert status == "repaired" and accepted == ["null-pointer"], accepted


def test_a_function_with_a_form_per_number_of_arguments_takes_the_one_that_fits() -> None:
    """`tl.expand_mask(m)` is `m`, `tl.expand_mask(m, shape)` is `tl.broadcast_to(m, shape)`; `tl.dtype_like(p)` is
    the pointer's element type."""
    text = (
        (API / "rownorm_good.py")
        .read_text()
        .replace("mask=mask, other=0.0)", "mask=tl.expand_mask(mask, (BLOCK,)), other=0.0).to(tl.dtype_like(x_ptr))")
        .replace("x / norm, mask=mask)", "x / norm, mask=tl.expand_mask(mask))")
    )
    parsed = Program.parse(text)
    assert parsed is not None
    (made,) = edits(parsed, ["missing-function"])
    assert "mask=tl.broadcast_to(mask, (BLOCK,)), other=0.0).to((x_ptr).dtype.element_ty)" in made.source
    assert "x / norm, mask=(mask))" in made.source


def test_a_function_defined_inside_a_kernel_is_moved_out_with_the_names_it_reads(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """`scaled` reads the kernel's `two` and `BLOCK`: both become its parameters (`BLOCK` stays constexpr), passed at
    the call; Triton's compiler refuses the nested definition, the repair passes."""
    from conftest import SCALE_GOOD, SCALE_TASK

    good = SCALE_GOOD.read_text()
    text = good.replace(
        "    mask = offsets < n\n",
        "    mask = offsets < n\n    two = 2.0\n\n    def scaled(v):\n        w = v * two\n"
        "        return w + tl.zeros((BLOCK,), tl.float32)\n\n",
    ).replace("tl.load(x_ptr + offsets, mask=mask) * 2.0", "scaled(tl.load(x_ptr + offsets, mask=mask))")
    assert text.count("def scaled") == 1 and "scaled(tl.load" in text
    program = Program.parse(text)
    assert program is not None
    (made,) = edits(program, ["nested-jit"])
    assert made.grounded
    assert "@triton.jit\ndef scaled(v, two, BLOCK: tl.constexpr):\n    w = v * two\n" in made.source
    assert "scaled(tl.load(x_ptr + offsets, mask=mask), two, BLOCK)" in made.source
    fixed = Program.parse(made.source)
    assert fixed is not None and edits(fixed, ["nested-jit"]) == []
    assert edits(Program.parse(good) or program, ["nested-jit"]) == []
    alone = Program.parse(text.replace("v * two", "v * 2.0").replace(" + tl.zeros((BLOCK,), tl.float32)", ""))
    assert alone is not None
    (moved,) = edits(alone, ["nested-jit"])  # it reads nothing of the kernel's: its calls stay as they are
    assert "def scaled(v):" in moved.source and "scaled(tl.load(x_ptr + offsets, mask=mask))" in moved.source
    defaults = Program.parse(text.replace("def scaled(v):", "def scaled(v, k=1.0):"))
    assert defaults is not None and edits(defaults, ["nested-jit"]) == []  # `two` would be passed as `k`
    (tmp_path / "source.py").write_text(text)
    status, accepted, _ = repair(evaluator, tmp_path, tmp_path / "source.py", task=SCALE_TASK)
    assert status == "repaired" and accepted == ["nested-jit"], accepted
