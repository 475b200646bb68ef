"""One error path: a usage or environment error is exit 2 and one sentence with a hint, checked before any
work starts, writing nothing; the traceback only with --debug; text printed as text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import SCALE_GOOD, SCALE_TASK
from typer.testing import CliRunner

from kope.cli import app
from kope.cli.run import settings
from kope.device import cuda_present

runner = CliRunner()
TASK = str(SCALE_TASK)
KERNEL_LINE = next(i for i, line in enumerate(SCALE_GOOD.read_text().splitlines(), 1) if "tl.store" in line)


@pytest.fixture(autouse=True)
def no_debug() -> None:
    settings.debug = False


def invoke(tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run `kope ARGS` in `tmp_path` (so anything written lands there); (exit status, stdout + stderr)."""
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, list(args))
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output


def written(tmp_path: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))


MISSING: dict[str, list[str]] = {
    "eval": ["eval", TASK, "missing.py"],
    "check": ["check", TASK, "missing.py"],
    "diagnose": ["diagnose", TASK, "missing.py", "--plot", "where.png"],
    "trace": ["trace", TASK, "missing.py", "--kernel", "_scale_kernel", "--line", "3"],
    "debug": ["debug", TASK, "missing.py", "--out", "fixed.py"],
    "optimize": ["optimize", TASK, "missing.py", "--out", "fast.py"],
    "cases": ["cases", "missing_task.py"],
    "regenerate": ["regenerate", "missing_task.py", "--model", "replay:none.jsonl"],
    "triage": ["triage", "missing_tasks", "missing_candidates", "--out", "triage"],
    "kb add": ["kb", "add", "missing.yaml"],
    "bench report": ["bench", "report", "missing_results", "--out", "report"],
    "bench suite": ["bench", "suite", "missing_suite"],
    "bench run": ["bench", "run", "missing_suite", "--out", "results"],
    "memory stats": ["memory", "stats", "--store", "missing.db"],
    "memory export": ["memory", "export", "--store", "missing.db"],
    "kb show": ["kb", "show", "missing-mask", "--store", "missing.db"],
}


@pytest.mark.parametrize("command", sorted(MISSING))
def test_a_missing_file_is_one_sentence_exit_2_and_nothing_written(tmp_path: Path, command: str) -> None:
    code, output = invoke(tmp_path, *MISSING[command], "--device", "cpu") if command in (
        "eval", "check", "diagnose", "debug", "optimize"
    ) else invoke(tmp_path, *MISSING[command])  # fmt: skip
    assert code == 2, output
    assert output.startswith("error: ") and "missing" in output.splitlines()[0], output
    assert "Traceback" not in output and len(output.splitlines()) <= 2, output
    assert written(tmp_path) == []  # no transcript, no output folder, no plot


def test_json_errors_are_json(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, "eval", TASK, "missing.py", "--json")
    assert code == 2
    error = json.loads(output)["error"]
    assert error["kind"] == "usage" and error["message"] == "no candidate file at missing.py" and error["hint"]


def test_the_traceback_only_with_debug(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, "--debug", "debug", TASK, "missing.py")
    assert code == 2 and "Traceback" in output and "error: no candidate file at missing.py" in output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["eval", TASK, str(SCALE_GOOD), "--trials", "0"], "--trials"),
        (["eval", TASK, str(SCALE_GOOD), "--device", "tpu"], "unknown device 'tpu'"),
        (["eval", TASK, str(SCALE_GOOD), "--sandbox", "maybe"], "maybe"),
        (["debug", TASK, str(SCALE_GOOD), "--max-seconds", "0"], "--max-seconds"),
        (["debug", TASK, str(SCALE_GOOD), "--model", "gpt4"], "unknown model spec 'gpt4'"),
        (["memory", "show", "nothing", "--store", "none"], "not a record reference"),
        (["eval", TASK, str(SCALE_GOOD), "--cases", "no_cases.json"], "no cases file (--cases) at no_cases.json"),
    ],
)
def test_a_bad_option_is_exit_2_before_any_work(tmp_path: Path, args: list[str], says: str) -> None:
    code, output = invoke(tmp_path, *args)
    assert code == 2 and says in output and "Traceback" not in output, output
    assert written(tmp_path) == []


@pytest.mark.parametrize(
    "args",
    [
        ["debug", TASK, str(SCALE_GOOD), "--out", "blocker/fixed.py"],
        ["optimize", TASK, str(SCALE_GOOD), "--out", "blocker/fast.py"],
        ["diagnose", TASK, str(SCALE_GOOD), "--plot", "blocker/where.png"],
        ["regenerate", TASK, "--model", "replay:none.jsonl", "--out", "blocker/samples"],
        ["triage", TASK, str(SCALE_GOOD), "--out", "blocker/triage"],
        ["memory", "export", "--out", "blocker/graph.html", "--store", "none"],
        ["cache", "clear", "--cache-dir", "blocker/cache"],
    ],
)
def test_an_unwritable_output_is_exit_2_before_any_work(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "blocker").write_text("a file where a folder should be\n")
    code, output = invoke(tmp_path, *args)
    assert code == 2 and "blocker is a file, not a folder" in output, output
    assert written(tmp_path) == ["blocker"]


@pytest.mark.skipif(cuda_present(), reason="this machine has a GPU")
def test_no_gpu_for_device_cuda(tmp_path: Path) -> None:
    for command in ("eval", "debug", "diagnose"):
        code, output = invoke(tmp_path, command, TASK, str(SCALE_GOOD), "--device", "cuda")
        assert code == 2, output
        assert output.startswith("error: --device cuda: this machine has no NVIDIA GPU") and "--device cpu" in output
        assert "Traceback" not in output and "AssertionError" not in output


def test_trace_names_the_kernels_and_lines_that_exist(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, "trace", TASK, str(SCALE_GOOD), "--kernel", "no_such_kernel", "--line", "12")
    assert code == 2 and "has no @triton.jit function of that name; it has: _scale_kernel (lines 10-12)" in output
    code, output = invoke(tmp_path, "trace", TASK, str(SCALE_GOOD), "--kernel", "_scale_kernel", "--line", "9999")
    assert code == 2 and "--line 9999 is not inside _scale_kernel, whose body is lines 10-12" in output
    assert KERNEL_LINE == 12


def test_regenerate_needs_a_model(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, "regenerate", TASK)
    assert code == 2 and "--model is offline" in output and "hint: give --model" in output
    assert written(tmp_path) == []


def test_a_missing_key_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, output = invoke(tmp_path, "debug", TASK, str(SCALE_GOOD), "--model", "openai:m", "--device", "cpu")
    assert code == 2 and "set OPENAI_API_KEY" in output and "Traceback" not in output, output
    assert written(tmp_path) == []


def test_names_are_printed_as_written(tmp_path: Path) -> None:
    """`:m:` is no emoji code, `[bold]` no markup: a name the user gave comes back as given."""
    for name in ("openai:smile:.py", "[bold]x[/].py", "a:thumbs_up:b.py"):
        code, output = invoke(tmp_path, "eval", TASK, name)
        assert code == 2 and f"no candidate file at {name}" in output, output


def test_a_long_path_is_not_wrapped_when_piped(tmp_path: Path) -> None:
    name = "a_candidate_with_a_very_long_name_" * 6 + ".py"
    code, output = invoke(tmp_path, "eval", TASK, name)
    assert code == 2 and output.splitlines()[0] == f"error: no candidate file at {name}"


def test_an_unreachable_endpoint_is_exit_2_and_out_is_not_written(tmp_path: Path) -> None:
    """The model cannot be reached: an environment error (exit 2), --out untouched, the attempt beside it."""
    broken = tmp_path / "broken.py"
    broken.write_text(SCALE_GOOD.read_text().replace("* 2.0", "* 2.5"))
    code, output = invoke(
        tmp_path, "debug", TASK, str(broken), "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
        "--out", "fixed.py", "--device", "cpu", "--trials", "1", "--no-probes", "--store", "none",
    )  # fmt: skip
    assert code == 2, output
    assert "openai:m" in output and "Ⓜ" not in output  # the model's name, as written
    assert "hint: check --model, --base-url and the API key" in output and "Traceback" not in output
    assert not (tmp_path / "fixed.py").exists()
    assert (tmp_path / "fixed.unrepaired.py").read_text() == broken.read_text()
