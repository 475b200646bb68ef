"""The fourth red team (issue 28, "Attack it yourself"): attacks written after reading the sealed channel, the
monitor and the sandbox, one or more per family of the issue, each with its control (the same code without its
trick is caught, or passes when honest). The candidates are in tests/fixtures/hostile/{after_check, relabel, told,
boundary, escapes}; each picks its trick from the job's KOPE_ATTACK variable."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, SCALE_TASK
from typer.testing import CliRunner

from kope.agents.debug import shown_findings
from kope.cli import app
from kope.evaluate import EvalOptions, Evaluator
from kope.protocol.results import EvalResult

HOSTILE = FIXTURES / "hostile"
PAIR_TASK = FIXTURES / "tasks" / "scale_pair.py"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")


def run(
    evaluator: Evaluator, task: Path, attack: str, trick: str, *, which: str = "all", **options: object
) -> EvalResult:
    env = {"KOPE_ATTACK": trick}
    chosen = EvalOptions(trials=2, timeout_s=60, memory_mb=2048, extra_env=env, **options)  # type: ignore[arg-type]
    return evaluator.evaluate(task, HOSTILE / attack, options=chosen, which=which)  # type: ignore[arg-type]


def rules(result: EvalResult) -> set[str]:
    found = {f.rule for f in result.integrity.findings if f.severity == "reject"} if result.integrity else set()
    return found | {f.rule for case in result.cases for f in case.findings}


def numerically_failed(result: EvalResult) -> bool:
    return bool(result.cases) and all(not case.passed and case.error is None for case in result.cases)


# -- family 1: forged after the check ---------------------------------------------------------------------------


@pytest.mark.parametrize("trick", ["iter", "none", "honest"])
def test_an_output_container_runs_no_code_of_the_candidate_after_forward(evaluator: Evaluator, trick: str) -> None:
    """A tuple subclass whose __iter__ fixes the first output with PyTorch when kope walks it after forward (to check
    it, to pack it): packed from the tuple it holds, through the builtin tuple's own slots, its 3x fails. Before the
    fix, the attack passed every case."""
    result = run(evaluator, PAIR_TASK, "after_check/pack_iter.py", trick)
    if trick == "honest":
        assert result.status == "pass", (result.error, result.integrity)
    else:
        assert numerically_failed(result), (result.status, [c.passed for c in result.cases])


# -- family 4: the boundary ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_only_socket_families_a_network_namespace_confines_open(evaluator: Evaluator, mode: str) -> None:
    """vsock reaches a hypervisor's host whatever the network namespace, XDP and netlink the host's interfaces where
    there is none. Before the fix vsock and netlink opened at every level and XDP under Landlock; with the sandbox
    off (the control) they still open."""
    result = run(evaluator, SCALE_TASK, "boundary/socket_families.py", "open", which="visible", sandbox=mode)
    assert result.status == "pass", result.error
    printed = result.cases[0].stdout
    opened = {line.split(":")[0].removeprefix("socket ") for line in printed.splitlines() if line.endswith("opened")}
    if mode == "off":
        assert "netlink" in opened, printed  # (vsock and xdp too where the kernel has them)
    elif result.sandbox is not None and "seccomp" in result.sandbox.protections:
        assert opened <= ({"netlink"} if result.sandbox.level == "namespaces" else set()), printed


# -- family 5: the model's prompt ------------------------------------------------------------------------------


@pytest.mark.parametrize("trick", ["name", "none"])
def test_a_hidden_size_put_in_a_finding_never_reaches_the_prompt(evaluator: Evaluator, trick: str) -> None:
    """A candidate names a run-time tensor subclass after the case's size: the gate's message on each hidden case
    names it. The repair loop quoted every rejecting message to the model; now a message only a hidden case produced
    is shown as its rule. The control (a plain tensor) passes, with nothing to quote."""
    result = run(evaluator, SCALE_TASK, "prompt/size_in_finding.py", trick)
    if trick == "none":
        assert result.status == "pass" and shown_findings(result) == ""
        return
    hidden = [c.name.removeprefix("N=") for c in result.cases if not c.visible]
    messages = " ".join(f.message for f in result.integrity.findings)
    assert result.status == "reject" and all(re.search(rf"Sz{size}\b", messages) for size in hidden), "a channel"
    shown = shown_findings(result)
    assert "Sz1000" in shown and not any(re.search(rf"Sz{size}\b", shown) for size in hidden), shown


# -- family 6: terminal escapes through any message -------------------------------------------------------------


@pytest.mark.parametrize("trick", ["name", "none"])
def test_an_exception_class_named_with_escapes_reaches_no_terminal(tmp_path: Path, trick: str) -> None:
    """The class name and module of an exception are the candidate's too; so is what it prints."""
    candidate = tmp_path / "candidate.py"
    candidate.write_text((HOSTILE / "escapes" / "class_name.py").read_text().replace('"name")', f'"{trick}")'))
    output = (
        CliRunner().invoke(app, ["eval", str(SCALE_TASK), str(candidate), "--device", "cpu", "--trials", "1"]).output
    )
    assert "Boom" in output and "went off" in output, output
    assert "\x1b" not in output and "\x07" not in output


@pytest.fixture(scope="module")
def evaluator() -> Iterator[Evaluator]:
    with Evaluator() as shared:
        yield shared


# -- family 2: reads and relabels no hook sees ------------------------------------------------------------------


@pytest.mark.parametrize("trick", ["view", "none"])
def test_an_output_rewritten_through_a_view_by_address_is_caught(evaluator: Evaluator, trick: str) -> None:
    """NumPy overwrites what the kernel stored through an `__array_interface__` view of data_ptr(): under the
    interpreter kope knows what each store left in memory, and the output no longer holds it. Before the fix the
    attack passed every case; the control (the kernel's 3x alone) fails on its values."""
    result = run(evaluator, SCALE_TASK, "relabel/array_interface.py", trick)
    if trick == "none":
        assert numerically_failed(result) and "harness-tamper" not in rules(result)
    else:
        assert result.status == "reject" and "harness-tamper" in rules(result), result.integrity
        assert all(case.passed for case in result.cases), "numerically right: only the gate stops it"


@pytest.mark.parametrize("trick", ["launder", "none"])
def test_a_result_laundered_through_a_fresh_allocation_is_caught(evaluator: Evaluator, trick: str) -> None:
    """NumPy writes 2x - 3x into a zeroed tensor through a view by address, and a kernel adds 3x: to the shadow map
    the tensor is still a fill. Under the interpreter kope keeps what each tracked storage held after its last
    tracked write (`kope.evaluate.inside.contents`) and compares it before each launch reads it. The control (the
    kernel adds 3x to the zeros) fails on its values and is not a tamper."""
    result = run(evaluator, SCALE_TASK, "relabel/view_launder.py", trick)
    if trick == "none":
        assert numerically_failed(result) and "harness-tamper" not in rules(result)
    else:
        assert result.status == "reject" and "harness-tamper" in rules(result), (result.status, result.integrity)
        assert all(case.passed for case in result.cases), "numerically right: only the gate stops it"


@pytest.mark.parametrize("trick", ["scratch", "input", "relaunder", "none", "none-input", "none-relaunder"])
def test_memory_written_behind_kopes_back_before_a_launch_reads_it_is_caught(evaluator: Evaluator, trick: str) -> None:
    """ctypes.memmove writes a share of the answer into memory a kernel then reads: an untouched allocation, the
    input (put back after the launch), a zeroed tensor that a tracked in-place call touches after the write. Each
    is caught before the read (`kope.evaluate.inside.contents`); each control, with the same calls and no write
    behind kope's back, fails on its values and is no tamper."""
    result = run(evaluator, SCALE_TASK, "relabel/memory_launder.py", trick)
    if trick.startswith("none"):
        assert "harness-tamper" not in rules(result), result.integrity
        assert result.status != "pass"
    else:
        assert result.status == "reject" and "harness-tamper" in rules(result), (result.status, result.integrity)
        assert all(case.passed for case in result.cases), "numerically right: only the gate stops it"


@pytest.mark.parametrize("trick", ["race", "none"])
def test_a_thread_alive_while_a_kernel_runs_is_caught(evaluator: Evaluator, trick: str) -> None:
    """A thread writes what the kernel reads after the launch's contents check, during the launch, and is joined
    before forward returns: a thread of the candidate alive while its kernel runs is `threads-processes`, whether
    or not its write won the race. The control joins its idle thread before the launch."""
    result = run(evaluator, SCALE_TASK, "relabel/thread_writer.py", trick)
    assert result.integrity is not None
    during = [f for f in result.integrity.findings if "while its kernel ran" in f.message]
    if trick == "none":
        assert numerically_failed(result) and not during, result.integrity
    else:
        assert result.status != "pass" and during, (result.status, result.integrity)


# -- family 3: what the job tells the candidate -----------------------------------------------------------------


@pytest.mark.parametrize("trick", ["sentinel", "none"])
def test_a_candidate_that_recognises_the_ghost_replay_is_still_caught(evaluator: Evaluator, trick: str) -> None:
    """The ghost replay announces itself (a launch that writes nothing); a candidate that returns its unwritten
    output then passes the replay, but what wrote the output is judged on every trial: a fresh allocation that
    neither a kernel nor PyTorch wrote holds data (`host-compute`). The control, which does not look, is caught by
    the replay as well."""
    result = run(evaluator, SCALE_TASK, "told/ghost_sentinel.py", trick)
    assert result.status == "reject" and "host-compute" in rules(result), result.integrity
    assert ("kernel-not-launched" in rules(result)) is (trick == "none")
