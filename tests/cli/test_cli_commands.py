"""The command line, run as a user runs it: a separate process, JSON on stdout, exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, HOSTILE, SCALE_GOOD, SCALE_TASK, sandbox_level
from typer.testing import CliRunner

from kope.cli import app
from kope.ops import get_op

runner = CliRunner()


def kope(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kope", *args, "--cache-dir", str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_eval_json_pass_fail_and_error(tmp_path: Path) -> None:
    passed = kope(
        "eval", str(SCALE_TASK), str(SCALE_GOOD), "--json", "--device", "cpu", "--trials", "1", cache=tmp_path
    )
    assert passed.returncode == 0, passed.stderr
    data = json.loads(passed.stdout)
    assert data["status"] == "pass" and len(data["cases"]) == 3 and data["device"] == "cpu"

    failed = kope("eval", str(SCALE_TASK), str(HOSTILE / "nan_output.py"), "--json", "--set", "N=40", cache=tmp_path)
    assert failed.returncode == 1
    data = json.loads(failed.stdout)
    assert data["status"] == "fail" and [c["name"] for c in data["cases"]] == ["N=40"]
    assert data["cases"][0]["mismatch_fraction"] == 1.0

    crashed = kope("eval", str(SCALE_TASK), str(HOSTILE / "syntax_error.py"), "--json", cache=tmp_path)
    assert crashed.returncode == 2
    assert json.loads(crashed.stdout)["error"]["kind"] == "syntax"


@pytest.mark.slow
def test_eval_readable_report_and_task_errors(tmp_path: Path) -> None:
    report = kope("eval", str(SCALE_TASK), str(HOSTILE / "runtime_error.py"), "--visible-only", cache=tmp_path)
    assert report.returncode == 2
    assert "error: runtime" in report.stdout and "did not expect" in report.stdout
    not_a_task = tmp_path / "empty.py"
    not_a_task.write_text("x = 1\n")
    bad = kope("eval", str(not_a_task), str(SCALE_GOOD), "--json", cache=tmp_path)
    assert bad.returncode == 2
    error = json.loads(bad.stdout)["error"]
    assert error["kind"] == "task" and "get_inputs" in error["message"]
    wrong_set = kope("eval", str(SCALE_TASK), str(SCALE_GOOD), "--set", "M=3", cache=tmp_path)
    assert wrong_set.returncode == 2 and "does not assign" in wrong_set.stderr


def test_ops_list_and_path() -> None:
    listed = runner.invoke(app, ["ops", "list", "--json"])
    assert listed.exit_code == 0
    rows = json.loads(listed.stdout)
    assert len(rows) >= 24 and {"name", "family", "task", "kernel"} <= set(rows[0])
    path = runner.invoke(app, ["ops", "path", "softmax"])
    assert path.stdout.split() == [str(get_op("softmax").task_path), str(get_op("softmax").kernel_path)]
    kernel_only = runner.invoke(app, ["ops", "path", "softmax", "--kernel"])
    assert kernel_only.stdout.strip() == str(get_op("softmax").kernel_path)
    unknown = runner.invoke(app, ["ops", "path", "sofmax"])
    assert unknown.exit_code == 2 and "did you mean softmax" in unknown.output


@pytest.mark.slow
@pytest.mark.skipif(sandbox_level() != "namespaces", reason="this machine refuses user namespaces (kope doctor)")
def test_sandbox_is_reported_and_strict_runs_where_namespaces_work(tmp_path: Path) -> None:
    strict = kope("eval", str(SCALE_TASK), str(SCALE_GOOD), "--json", "--trials", "1", "--visible-only",
                  "--sandbox", "strict", cache=tmp_path)  # fmt: skip
    assert strict.returncode == 0, strict.stderr
    sandbox = json.loads(strict.stdout)["sandbox"]
    assert sandbox["level"] == "namespaces" and sandbox["mode"] == "strict" and "seccomp" in sandbox["protections"]
    off = kope("eval", str(SCALE_TASK), str(SCALE_GOOD), "--trials", "1", "--visible-only", "--sandbox", "off",
               cache=tmp_path)  # fmt: skip
    assert off.returncode == 0 and "warning: the candidate ran with process isolation only" in off.stdout
    bad = runner.invoke(app, ["eval", str(SCALE_TASK), str(SCALE_GOOD), "--sandbox", "maybe"])
    assert bad.exit_code == 2 and "maybe" in bad.output


@pytest.mark.slow
def test_doctor_says_what_this_machine_supports() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kope", "doctor", "--json"], capture_output=True, text=True, timeout=120
    )
    report = json.loads(done.stdout)
    assert done.returncode == (0 if report["auto"]["level"] == "namespaces" else 1)
    assert report["landlock_fallback"]["level"] in ("landlock", "process")
    assert report["seccomp"] in (True, False) and isinstance(report["advice"], list) and report["advice"]
    readable = subprocess.run([sys.executable, "-m", "kope", "doctor"], capture_output=True, text=True, timeout=120)
    assert "sandbox level for `--sandbox auto`" in readable.stdout and "landlock ABI" in readable.stdout


@pytest.mark.slow
def test_optimize_exits_0_for_a_correct_kernel_it_could_not_make_faster(tmp_path: Path) -> None:
    # The time budget is spent on the start: nothing faster is tried, the result is the correct start.
    # (Exit 1 for a wrong start and 2 for one that does not run: tests/agents/test_optimize.py.)
    done = runner.invoke(
        app,
        [
            "optimize",
            str(SCALE_TASK),
            str(SCALE_GOOD),
            "--json",
            "--device",
            "cpu",
            "--max-seconds",
            "1",
            "--trials",
            "1",
            "--confirm",
            "0",
            "--store",
            "none",
            "--out",
            str(tmp_path / "out.py"),
        ],
    )
    report = json.loads(done.stdout)
    assert done.exit_code == 0 and report["status"] == "not-improved" and report["stop_reason"] == "time-budget"
    assert (tmp_path / "out.py").read_text() == SCALE_GOOD.read_text()


@pytest.mark.slow
def test_eval_tolerance_profile_is_chosen_named_and_compared(tmp_path: Path) -> None:
    judge = FIXTURES / "judge"
    task, kernel = str(judge / "tasks" / "row_sum.py"), str(judge / "candidates" / "row_sum_bf16.py")
    strict = kope("eval", task, kernel, "--device", "cpu", "--trials", "1", cache=tmp_path)
    assert strict.returncode == 1, strict.stderr
    assert "tolerance profile: strict" in strict.stdout and "profiles disagree: strict fail, kernelbench pass" in (
        strict.stdout
    )
    loose = kope("eval", task, kernel, "--json", "--tolerance", "kernelbench", "--trials", "1", cache=tmp_path)
    assert loose.returncode == 0, loose.stderr
    data = json.loads(loose.stdout)
    assert data["status"] == "pass" and data["tolerance_profile"] == "kernelbench"
    assert data["tolerance_reason"] == "--tolerance kernelbench"
    assert data["profile_disagreement"]["strict"] == "fail"


@pytest.mark.slow
def test_eval_says_when_cuda_was_emulated_and_can_turn_it_off() -> None:

    written = FIXTURES / "cuda" / "written_for_cuda.py"
    emulated = CliRunner().invoke(app, ["eval", str(SCALE_TASK), str(written), "--trials", "1", "--json"])
    assert emulated.exit_code == 0, emulated.output
    assert json.loads(emulated.output)["emulation"]["note"] == "CUDA emulated on the CPU interpreter"
    plain = CliRunner().invoke(app, ["eval", str(SCALE_TASK), str(written), "--trials", "1", "--no-cuda-emulation"])
    assert plain.exit_code == 2 and "CUDA emulated" not in plain.output
