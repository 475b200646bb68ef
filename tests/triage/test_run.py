"""Triage of a 22-candidate run made from the suite: locally, on a local Ray cluster with a worker
killed mid-run, on a Ray worker node that cannot see the run's folder, and its report read in a real
headless browser (resuming: test_cli_triage.py).

Ray (`kope[ray]`) and Chromium (Debian's `chromium`) are set up by scripts/setup.sh; where either is
missing its test is skipped with the reason (pytest -rs prints it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kope.evaluate import EvalOptions
from kope.executors import LocalExecutor
from kope.triage import TriageSummary, read_rows, triage
from kope.triage.sample import SMALL_OPS, SampleRun, make_run

OPTIONS = EvalOptions(trials=1)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    # 22 candidates: 5 problems, each with its kernel, two broken ones and a cheat; two near misses
    # (repairs are what costs most on the interpreter, and two are enough to compare)
    run = make_run(
        tmp_path_factory.mktemp("run"),
        ops=SMALL_OPS[:5],
        near_misses=1,
        broken=2,
        small=True,
        near_miss_ops=SMALL_OPS[:2],
    )
    assert len(run.expected) == 22
    return run


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reference-cache")


@pytest.fixture(scope="module")
def local(sample: SampleRun, cache: Path, tmp_path_factory: pytest.TempPathFactory) -> TriageSummary:
    out = tmp_path_factory.mktemp("local")
    return triage(sample.tasks, sample.candidates, out, executor=LocalExecutor(2), options=OPTIONS, cache_dir=cache)


def _outcome(summary: TriageSummary) -> dict[str, tuple[str, str, str, str | None]]:
    """Each candidate's classes, repair and repaired source."""
    return {
        r.id: (r.before, r.after, r.repair, (summary.out / r.repaired).read_text() if r.repaired else None)
        for r in summary.rows
    }


@pytest.mark.slow
def test_local_triage_classifies_and_repairs(local: TriageSummary, sample: SampleRun) -> None:
    assert {r.id: r.before for r in local.rows} == sample.expected
    rows = read_rows(local.out)
    assert len(rows) == 22 and len((local.out / "results.jsonl").read_text().splitlines()) == 22
    broken = [r for r in rows if r.before == "broken"]
    assert {r.error_kind for r in broken} == {"syntax", "runtime"}
    assert all("torch-compute" in r.findings for r in rows if r.before == "cheat")
    near = [r for r in rows if r.before == "near-miss"]
    assert all(r.heatmap and (local.out / r.heatmap).is_file() for r in near)
    repaired = [r for r in near if r.repair == "repaired"]
    assert repaired, [(r.id, r.repair, r.stop_reason) for r in near]
    for row in repaired:
        assert row.after == "pass" and row.diff.startswith("--- a/") and (local.out / str(row.repaired)).is_file()
    assert local.counts("after")["pass"] == local.counts("before")["pass"] + len(repaired) == 5 + len(repaired)


@pytest.fixture(scope="module")
def ray_executor() -> Iterator[object]:
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.skip("Ray is not installed: pip install 'kope[ray]' (scripts/setup.sh does)")
    from kope.executors.raycluster import RayExecutor

    executor = RayExecutor(num_cpus=2, object_store_mb=128)
    yield executor
    executor.close()


def _busy_ray_workers() -> list[int]:
    """Ray worker processes running a job now (Ray titles them `ray::<function>` while they do)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::_run_job"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
def test_a_ray_worker_that_cannot_see_the_run_gives_the_local_results(
    local: TriageSummary, sample: SampleRun, cache: Path, blind_executor: object, tmp_path: Path
) -> None:
    """Jobs carry the task and the candidate as text and rows carry back the files made for the results
    folder: a worker on a node without the head's file system triages as the local executor does."""
    summary = triage(
        sample.tasks,
        sample.candidates,
        tmp_path,
        executor=blind_executor,  # type: ignore[arg-type]
        options=OPTIONS,
        cache_dir=cache,
    )
    assert summary.executor == "ray" and summary.ran == 22
    assert all(r.error is None for r in summary.rows), [r.error for r in summary.rows if r.error]
    assert _outcome(summary) == _outcome(local)
    fields = ("before", "after", "status", "error_kind", "cases_passed", "cases", "findings", "repair", "diff")
    mine = {r.id: [getattr(r, f) for f in fields] for r in summary.rows}
    assert mine == {r.id: [getattr(r, f) for f in fields] for r in local.rows}
    assert all((tmp_path / r.heatmap).is_file() for r in summary.rows if r.heatmap)


def test_ray_gives_the_local_results_with_a_worker_killed(
    local: TriageSummary, sample: SampleRun, cache: Path, ray_executor: object, tmp_path: Path
) -> None:
    killed: list[int] = []

    def kill_one(row: object, summary: TriageSummary) -> None:
        busy = _busy_ray_workers()
        if not killed and busy:
            os.kill(busy[0], signal.SIGKILL)
            killed.append(busy[0])

    summary = triage(
        sample.tasks,
        sample.candidates,
        tmp_path,
        executor=ray_executor,  # type: ignore[arg-type]
        options=OPTIONS,
        cache_dir=cache,
        progress=kill_one,
    )
    assert killed, "no Ray worker was seen running a job"
    assert summary.executor == "ray" and summary.ran == 22
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 22 and {r.id for r in read_rows(tmp_path)} == set(sample.expected)
    assert all(r.error is None for r in summary.rows), [r.error for r in summary.rows if r.error]
    assert _outcome(summary) == _outcome(local)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def blind_executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A Ray cluster whose only worker node runs in a mount namespace of its own, with the tests' temporary
    folders (the run, its results, the reference cache) under an empty tmpfs: its processes cannot see the
    run's folder, as on another machine. The head node runs no job (no CPU)."""
    try:
        import ray
    except ImportError:
        pytest.skip("Ray is not installed: pip install 'kope[ray]' (scripts/setup.sh does)")
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("hiding a folder from the Ray worker node needs unshare and root (a private mount namespace)")
    from kope.executors.raycluster import RayExecutor

    hidden = tmp_path_factory.getbasetemp()
    cli = str(Path(sys.executable).parent / "ray")
    address = f"127.0.0.1:{_free_port()}"
    common = ["--object-store-memory=100000000", "--block", "--disable-usage-stats"]
    # a token left in ~/.ray by another cluster must not turn authentication on for this one; on a busy
    # machine a node's agents take longer to start than Ray waits for them by default
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_agent_register_timeout_ms": "600000"}
    port = address.split(":")[1]
    head = subprocess.Popen(
        [cli, "start", "--head", f"--port={port}", "--num-cpus=0", "--include-dashboard=false", *common],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    node = None
    try:
        _connect(ray, address, head)
        blind = f'mount -t tmpfs kope-hidden "{hidden}" && exec "{cli}" start --address={address} --num-cpus=2 '
        node = subprocess.Popen(
            [unshare, "--mount", "--propagation", "private", "sh", "-c", blind + " ".join(common)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(900):
            if ray.cluster_resources().get("CPU", 0) >= 2:
                break
            if node.poll() is not None:
                pytest.skip("the blind Ray worker node exited while it started (see /tmp/ray/session_latest/logs)")
            time.sleep(0.2)
        else:
            pytest.fail("the blind Ray worker node did not join")
        seen = ray.get(ray.remote(lambda path: os.listdir(path)).options(num_cpus=1).remote(str(hidden)))
        assert seen == [] and any(hidden.iterdir()), "the worker node sees the run's folder"
        yield RayExecutor(address=address)
    finally:
        ray.shutdown()
        for process in (node, head):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=90)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)


def _connect(ray: Any, address: str, head: subprocess.Popen[bytes]) -> None:
    """Connect once the head node is up (it takes seconds, more on a busy machine)."""
    for _ in range(90):
        if head.poll() is not None:
            # Ray's raylet gives up when its agents start slower than it waits (a machine with a load
            # average of 20 on 2 cores): the machine, not kope; /tmp/ray/session_latest/logs says so
            pytest.skip("the Ray head node exited while it started (see /tmp/ray/session_latest/logs/raylet.out)")
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
            return
        except (ConnectionError, RuntimeError):
            time.sleep(2)
    pytest.fail(f"the Ray head node at {address} did not come up")


@pytest.mark.slow
def test_the_report_in_a_headless_browser(local: TriageSummary, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no headless browser: apt-get install chromium (scripts/setup.sh does, as root)")
    page = (local.out / "report.html").as_uri()
    flags = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--allow-file-access-from-files",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run([*flags, "--dump-dom", page], capture_output=True, text=True, timeout=120, check=True).stdout
    assert dom.count('class="candidate"') == 22 and dom.count('<h2 class="problem">') == 5
    assert 'id="rate-before">22.7%' in dom and dom.count('class="heat"') == 2
    repaired = sum(r.repair == "repaired" for r in local.rows)
    assert f'id="saved">{repaired}<' in dom and dom.count('<span class="add">') >= repaired
    shot = tmp_path / "report.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1280,2000", page], capture_output=True, timeout=120, check=True
    )
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one


def test_a_manifest_row_runs_in_its_pipelines_module_mode(tmp_path: Path) -> None:
    """One inference BatchNorm kernel twice: the row that says `eval` passes; in the one that says `train`
    (KernelBench's harness) the reference's Dropout draws, so its values cannot be matched (`unsupported-here`, with
    the limit that says why: not a near miss to repair); each row names its mode."""
    judge = Path(__file__).resolve().parents[1] / "fixtures" / "judge"
    tasks, candidates = tmp_path / "tasks", tmp_path / "candidates"
    tasks.mkdir()
    candidates.mkdir()
    shutil.copy(judge / "tasks" / "batchnorm_dropout.py", tasks / "batchnorm_dropout.py")
    shutil.copy(judge / "candidates" / "batchnorm_inference.py", candidates / "bn.py")
    manifest = candidates / "m.csv"
    manifest.write_text(
        "task,candidate,id,module_mode\nbatchnorm_dropout.py,bn.py,inference,eval\nbatchnorm_dropout.py,bn.py,kb,train\n"
    )
    summary = triage(tasks, manifest, tmp_path / "out", options=OPTIONS, repair=False)
    rows = {row.id: row for row in summary.rows}
    assert (rows["inference"].before, rows["inference"].module_mode) == ("pass", "eval")
    assert (rows["kb"].before, rows["kb"].module_mode) == ("unsupported-here", "train")
    assert [limit.split(":")[0] for limit in rows["kb"].limits] == ["random-reference"]
