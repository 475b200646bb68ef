"""Attacks on the verdict itself (tests/fixtures/hostile/sealed), written against the sealed channel, the input
feed and the boundary of issue 28. Each fixture's trick is chosen by the KOPE_ATTACK variable of the job's
environment; every test also runs its control, the same code without the trick (or with the sandbox off), so
each test can fail both ways."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import sandbox_level

from kope.evaluate import EvalOptions, Evaluator
from kope.evaluate.view import narrowed
from kope.protocol import IntegritySpec, JobSpec, channel
from kope.protocol.results import EvalResult
from kope.protocol.sandbox import SandboxMode

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tests" / "fixtures" / "tasks" / "scale.py"
ATTACKS = ROOT / "tests" / "fixtures" / "hostile" / "sealed"
FAKE_KEY = "sk-kope-fake-9b2e71d04c"

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
namespaces_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or sandbox_level() != "namespaces",
    reason="needs a machine that allows unprivileged user namespaces (see `kope doctor`)",
)


def run(
    evaluator: Evaluator,
    attack: str,
    trick: str,
    *,
    which: str = "visible",
    mode: SandboxMode = "auto",
    env: dict[str, str] | None = None,
    **options: object,
) -> EvalResult:
    chosen = EvalOptions(
        trials=2, timeout_s=60, sandbox=mode, extra_env={"KOPE_ATTACK": trick, **(env or {})}, **options
    )  # type: ignore[arg-type]
    return evaluator.evaluate(TASK, ATTACKS / attack, options=chosen, which=which)  # type: ignore[arg-type]


def printed(result: EvalResult) -> str:
    return "\n".join(case.stdout for case in result.cases)


def rules(result: EvalResult) -> set[str]:
    found = {f.rule for f in result.integrity.findings} if result.integrity else set()
    return found | {f.rule for case in result.cases for f in case.findings}


def numerically_failed(result: EvalResult) -> bool:
    """The parent compared the zeros the kernel wrote: every case has mismatches, none passed."""
    return all(not case.passed and case.error is None and (case.mismatch_count or 0) > 0 for case in result.cases)


# -- the stream's format (kope.protocol.channel), without a worker -------------------------------


def _stream(key: bytes, records: list[tuple[bytes, str, bytes]]) -> bytes:
    body = channel.MAGIC + b"".join(channel.record(kind, name, payload) for kind, name, payload in records)
    end = channel.END + (0).to_bytes(2, "little") + channel.MAC_BYTES.to_bytes(8, "little")
    return body + end + hmac.new(key, body + end, hashlib.sha256).digest()


def _parse(data: bytes, key: bytes) -> channel.Unsealed:
    return channel.parse(io.BytesIO(data), len(data), key)


def test_one_signed_stream_is_accepted_and_anything_else_refused(tmp_path: Path) -> None:
    key, other = os.urandom(32), os.urandom(32)
    good = _stream(key, [(channel.FILE, "outputs_0.safetensors", b"abc"), (channel.RESULT, "result.json", b"{}")])
    found = _parse(good, key)
    channel.write_sealed(io.BytesIO(good), found, tmp_path, "result.json")
    assert (tmp_path / "sealed" / "outputs_0.safetensors").read_bytes() == b"abc"
    assert (tmp_path / "sealed" / "result.json").read_bytes() == b"{}"
    with pytest.raises(channel.ChannelError, match="signature"):
        _parse(good, other)
    with pytest.raises(channel.ChannelError, match="follow the end"):
        _parse(good + b"x", key)
    with pytest.raises(channel.ChannelError, match="does not start"):
        _parse(b"junk" + good, key)
    with pytest.raises(channel.Incomplete):
        _parse(good[:-40], key)
    with pytest.raises(channel.ChannelError, match="does not write"):
        _parse(_stream(key, [(channel.FILE, "../escape", b""), (channel.RESULT, "result.json", b"{}")]), key)
    with pytest.raises(channel.ChannelError, match="no result"):
        _parse(_stream(key, [(channel.FILE, "outputs_0.safetensors", b"abc")]), key)


# -- family 1: the verdict is forged after the check -----------------------------------------------------


@linux_only
@pytest.mark.parametrize("trick", ["del", "atexit", "thread", "safetensors", "replace"])
def test_results_rewritten_after_the_check_are_never_read(evaluator: Evaluator, trick: str) -> None:
    control = run(evaluator, "late_forgery.py", "none")
    assert numerically_failed(control), "the control (no trick) returns zeros and must fail"
    attacked = run(evaluator, "late_forgery.py", trick)
    assert numerically_failed(attacked), (attacked.status, attacked.error, printed(attacked))
    if trick in ("del", "thread"):
        assert "forged" in printed(attacked), "the trick ran (its files were written) and changed nothing"
    if trick == "replace":
        assert "harness-tamper" in rules(attacked)


@linux_only
@pytest.mark.parametrize("trick", ["mode", "dispatch"])
def test_a_mode_beneath_kope_cannot_change_what_is_packed(evaluator: Evaluator, trick: str) -> None:
    attacked = run(evaluator, "late_forgery.py", trick)
    assert numerically_failed(attacked), (attacked.status, printed(attacked))
    # wrong values with a gate finding: a near miss with the finding attached (right values would be a cheat)
    assert attacked.status == "fail" and attacked.integrity.verdict == "reject" and "harness-tamper" in rules(attacked)
    losses = [f.message for case in attacked.cases for f in case.findings if f.rule == "harness-tamper"]
    assert any("mode was left active" in message for message in losses), losses


@linux_only
@pytest.mark.parametrize("trick", ["whole", "prefix"])
def test_a_stream_the_candidate_writes_itself_is_refused(evaluator: Evaluator, trick: str) -> None:
    control = run(evaluator, "forged_stream.py", "none")
    assert numerically_failed(control)
    attacked = run(evaluator, "forged_stream.py", trick)
    assert attacked.status == "error" and attacked.error is not None
    assert "refused" in attacked.error.message and "harness-tamper" in rules(attacked)
    assert not any(case.passed for case in attacked.cases)


# -- family 3: nothing in the job says which run is watched ----------------------------------------------


def test_the_job_spec_says_nothing_of_the_probes() -> None:
    """What the integrity spec holds is the same for every job of a run (the task's allowlist, the comparison's
    tolerance): nothing in it tells a probed run from another."""
    assert set(IntegritySpec.model_fields) == {"extra_allow", "copy_tolerance"}
    spec = json.loads(JobSpec(mode="candidate", integrity=IntegritySpec()).model_dump_json())
    assert spec["integrity"] == {"extra_allow": [], "copy_tolerance": {}}


@linux_only
def test_caching_is_probed_on_every_case(evaluator: Evaluator) -> None:
    control = run(evaluator, "watched_cache.py", "none", which="all")  # (the static gate rejects its open())
    assert all(case.passed for case in control.cases)
    assert not [f for case in control.cases for f in case.findings if f.rule == "output-caching"]
    attacked = run(evaluator, "watched_cache.py", "cache", which="all")
    caught = [c.name for c in attacked.cases if any(f.rule == "output-caching" for f in c.findings)]
    assert attacked.status != "pass" and len(caught) == len(attacked.cases), caught


@linux_only
def test_copies_of_pytorch_results_are_judged_on_every_case(evaluator: Evaluator) -> None:
    control = run(evaluator, "torch_copy_later.py", "none", which="all")
    assert control.status == "pass", control.integrity
    attacked = run(evaluator, "torch_copy_later.py", "copy", which="all")
    assert all(case.passed for case in attacked.cases), "numerically it is right"
    copied = [c.name for c in attacked.cases if any(f.rule == "copy-kernel" for f in c.findings)]
    # N=1000 is the first case (computed); N=1 stores one lane, too few to judge a copy (see integrity.md)
    assert attacked.status == "reject" and copied == ["N=257"], copied


@linux_only
@pytest.mark.parametrize("mode", ["auto", "landlock"])
def test_the_candidate_sees_a_trial_s_inputs_only_when_it_runs(evaluator: Evaluator, mode: SandboxMode) -> None:
    control = run(evaluator, "early_inputs.py", "none", mode=mode)  # (the static gate rejects os.walk)
    assert all(case.passed for case in control.cases) and "harness-tamper" not in rules(control)
    assert "inputs found: 0" in printed(control), printed(control)
    attacked = run(evaluator, "early_inputs.py", "feed", mode=mode)
    assert "feed answered b'ok' 1" in printed(attacked), "the early request got trial 1's inputs"
    assert attacked.status == "error" and attacked.error is not None and "asked for before" in attacked.error.message
    assert "harness-tamper" in rules(attacked)


# -- family 4: the boundary ------------------------------------------------------------------------------


@namespaces_only
@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_io_uring_is_refused(evaluator: Evaluator, mode: SandboxMode) -> None:
    result = run(evaluator, "boundary.py", "io_uring", mode=mode, integrity=False)
    assert result.status == "pass"
    if mode == "off":
        assert "Operation not permitted" not in printed(result) and "io_uring_setup:" in printed(result)
    else:
        assert "io_uring_setup: Operation not permitted" in printed(result), printed(result)


@linux_only
def test_memory_held_in_a_memfd_counts_against_the_limit(evaluator: Evaluator) -> None:
    small = run(evaluator, "boundary.py", "memfd", env={"KOPE_MB": "32"}, memory_mb=1536, integrity=False)
    assert small.status == "pass", small.error
    held = run(evaluator, "boundary.py", "memfd", env={"KOPE_MB": "1600"}, memory_mb=1536, integrity=False)
    assert held.error is not None and held.error.kind == "memory", (held.error, printed(held))


@namespaces_only
@pytest.mark.parametrize("mode", ["auto", "landlock"])
def test_the_sandbox_root_folder_counts_against_the_disk_limit(evaluator: Evaluator, mode: SandboxMode) -> None:
    small = run(evaluator, "boundary.py", "root_disk", mode=mode, env={"KOPE_MB": "16"}, disk_mb=96, integrity=False)
    assert small.status == "pass", small.error
    filled = run(evaluator, "boundary.py", "root_disk", mode=mode, env={"KOPE_MB": "192"}, disk_mb=96, integrity=False)
    assert filled.error is not None and filled.error.kind == "disk", (filled.error, printed(filled))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder on the import path holding a package and, beside it, a `.env` with a key."""
    folder = tmp_path / "project"
    (folder / "helpers").mkdir(parents=True)
    (folder / "helpers" / "__init__.py").write_text("")
    (folder / "tool.py").write_text("")
    (folder / ".env").write_text(f"OPENAI_API_KEY={FAKE_KEY}\n")
    (folder / "notes.txt").write_text("private\n")
    return folder


def test_an_import_folder_inside_a_hidden_folder_is_narrowed_to_what_imports_read(project: Path) -> None:
    kept = narrowed([str(project), "/usr/lib"], hidden=(str(project.parent),))
    assert kept == [str(project / "helpers"), str(project / "tool.py"), "/usr/lib"]
    assert narrowed([str(project)], hidden=("/nowhere",)) == [str(project)], "outside hidden folders: unchanged"
    assert narrowed([str(project)], hidden=(str(project),)) == [str(project)], "a hidden folder is dropped later, whole"


@pytest.mark.slow
@namespaces_only
@pytest.mark.parametrize("mode", ["off", "auto", "landlock"])
def test_files_beside_an_import_folder_are_not_in_the_view(
    project: Path, monkeypatch: pytest.MonkeyPatch, mode: SandboxMode
) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(project), os.environ.get("PYTHONPATH", "")]).rstrip(":"))
    with Evaluator() as own:
        secret = {"KOPE_FILE": str(project / ".env")}
        result = run(own, "boundary.py", "read_file", mode=mode, env=secret, integrity=False)
    assert result.status == "pass"
    if mode == "off":
        assert FAKE_KEY in printed(result)
    else:
        assert FAKE_KEY not in result.model_dump_json() and "refused:" in printed(result)


@linux_only
def test_the_fork_server_runs_from_the_root_without_its_folder_on_the_import_path(evaluator: Evaluator) -> None:
    runner = evaluator.runner
    process = getattr(runner, "_proc", None)
    if process is None:
        pytest.skip("not a fork server")
    assert os.readlink(f"/proc/{process.pid}/cwd") == "/"
    with open(f"/proc/{process.pid}/cmdline", "rb") as handle:
        arguments = handle.read().split(b"\0")
    assert b"-P" in arguments


@pytest.fixture(scope="module")
def evaluator() -> Iterator[Evaluator]:
    with Evaluator() as shared:
        yield shared


@linux_only
def test_a_candidate_job_carries_no_trial_seeds(evaluator: Evaluator) -> None:
    """From the seeds a candidate that knows the task's get_inputs could build every trial's inputs, and a table of
    answers, before the first call: its job says only how many trials there are."""
    result = run(evaluator, "boundary.py", "read_file", env={"KOPE_FILE": "../spec.json"}, integrity=False)
    assert result.status == "pass", result.error
    shown = printed(result)
    assert "read:" in shown, shown  # the job's spec is readable from inside the job: what it holds is the point
    spec = json.loads(shown.split("read:", 1)[1].strip().splitlines()[0])
    assert spec["mode"] == "candidate" and spec["trial_seeds"] == [] and spec["trials"] == 2
