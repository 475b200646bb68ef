"""`kope triage` from the command line: matching, the unmatched candidate reported, rows, the report, and
an interrupted run resumed (a rerun runs only the candidates without a row)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kope.cli import app
from kope.ops import get_op
from kope.triage.run import read_rows
from kope.triage.sample import make_run


def _json(output: str) -> dict[str, object]:
    """The JSON object in the output (the progress bar, on stderr, may surround it)."""
    found, _ = json.JSONDecoder().raw_decode(output[output.index("{\n") :])
    return found


@pytest.mark.slow
def test_triage_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # `--store none` records nothing: no SQLite file named `none` here
    run = make_run(tmp_path / "run", ops=["relu"], good=0, near_misses=0, broken=2, cheats=1, small=True)
    (run.candidates / "level1" / "77_orphan").mkdir()
    (run.candidates / "level1" / "77_orphan" / "sample_0.py").write_text(get_op("relu").kernel_path.read_text())
    out = tmp_path / "out"
    args = [
        "triage",
        str(run.tasks),
        str(run.candidates),
        "--out",
        str(out),
        "--trials",
        "1",
        "--json",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--store",
        "none",
    ]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert not list(tmp_path.glob("none*"))
    summary = _json(first.output)
    assert summary["before"] == {"pass": 0, "near-miss": 0, "broken": 2, "cheat": 1, "unsupported-here": 0, "error": 0}
    assert summary["unmatched"] == 1 and "77_orphan" in first.output
    assert (out / "report.html").is_file()
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3 and '"error_kind":"runtime"' in "".join(lines)
    # as if the run had been stopped before its runtime-broken candidate: the rerun runs that one alone
    (out / "results.jsonl").write_text("".join(line + "\n" for line in lines if '"error_kind":"runtime"' not in line))
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    resumed = _json(again.output)
    assert (resumed["resumed"], resumed["ran"], resumed["before"]) == (2, 1, summary["before"])
    assert len((out / "results.jsonl").read_text().splitlines()) == 3
    bad = CliRunner().invoke(app, [*args[:5], "--executor", "dask"])
    assert bad.exit_code != 0 and "unknown executor" in bad.output


def _variant(kernel: str, first_lines: str) -> str:
    """The kernel with `first_lines` (8-space indented) at the top of its forward."""
    anchor = "        x = x.contiguous()\n"
    assert anchor in kernel
    return kernel.replace(anchor, first_lines + anchor, 1)


@pytest.mark.slow
def test_triage_a_person_can_read(tmp_path: Path) -> None:
    """A manifest with the pipeline's verdicts; candidates failing with a bare assert (twice: one cause), a
    message full of terminal escapes, a segfault, a sleep past --timeout. The log gets a line per candidate,
    the summary each cause once, the classes by source verdict; no escape reaches the output or the page."""
    run = make_run(tmp_path / "run", ops=["relu"], good=1, near_misses=0, broken=0, cheats=0, small=True)
    kernel = get_op("relu").kernel_path.read_text()
    folder = tmp_path / "c"
    folder.mkdir()
    variants = {
        "assert_a": _variant(kernel, "        assert x.dim() == 3\n"),
        "assert_b": _variant(kernel, "        y = x * 2\n        assert x.dim() == 3\n"),
        "escapes": _variant(kernel, "        raise RuntimeError('\\x1b[2J\\x1b]0;pwned\\x07boom [/] [bold]end')\n"),
        "segfault": _variant(kernel, "        import ctypes\n        ctypes.string_at(0)\n"),
        "sleeper": _variant(kernel, "        import time\n        time.sleep(60)\n"),
    }
    for name, source in variants.items():
        (folder / f"{name}.py").write_text(source)
    good = run.candidates / "level1" / "1_relu" / "sample_0.py"
    rows = [f"level1/1_relu.py,{good},good,model-a,pass"]
    rows += [f"level1/1_relu.py,{name}.py,{name},model-{'b' if name != 'sleeper' else 'a'},pass" for name in variants]
    rows[-1] = rows[-1].replace(",pass", ",fail")
    manifest = folder / "manifest.csv"
    manifest.write_text("task,candidate,id,model,source_verdict,split\n" + "".join(f"{r},dev\n" for r in rows))
    out = tmp_path / "out"
    args = ["triage", str(run.tasks), str(manifest), "--out", str(out), "--trials", "1", "--timeout", "5"]
    args += ["--policy", "auto", "--cache-dir", str(tmp_path / "cache")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    text = first.output
    assert "\x1b" not in text and "\x07" not in text and "boom [/] [bold]end" in text
    progress = [line for line in text.splitlines() if line.startswith("[") and "/6] " in line]
    assert len(progress) == 6 and any(line.startswith("[6/6] ") for line in progress), text
    assert "AssertionError at line N: assert x.dim() == N" in text  # one cause, numbers taken out
    rows_by_id = {r.id: r for r in read_rows(out)}
    assert rows_by_id["assert_a"].error_message.endswith("AssertionError at line 28: assert x.dim() == 3")
    assert rows_by_id["assert_b"].error_message.endswith("AssertionError at line 29: assert x.dim() == 3")
    assert "segmentation fault" in str(rows_by_id["segfault"].error_message)
    assert "kope diagnose" in str(rows_by_id["segfault"].error_message)
    assert rows_by_id["sleeper"].error_kind == "timeout" and "5 s" in str(rows_by_id["sleeper"].error_message)
    page = (out / "report.html").read_text()
    assert "\x1b" not in page and "\x07" not in page and "boom [/] [bold]end" in page
    assert page.count('class="cause"') == 4 and 'data-verdict="fail"' in page
    summary = _json(CliRunner().invoke(app, [*args, "--json"]).output)  # a resume: every row is there
    assert summary["ran"] == 0 and summary["resumed"] == 6
    causes = summary["causes"]
    assert isinstance(causes, list) and len(causes) == 4
    top = causes[0]
    assert (top["kind"], top["count"], top["example"]) == ("runtime", 2, "assert_a")
    assert top["message"] == "forward failed on trial N: AssertionError at line N: assert x.dim() == N"
    by_verdict = summary["by_source_verdict"]
    assert isinstance(by_verdict, dict)
    assert by_verdict["pass"]["pass"] == 1 and by_verdict["pass"]["broken"] == 4 and by_verdict["fail"]["broken"] == 1
    assert summary["by_model"] == {
        "model-a": {**dict.fromkeys(summary["classes"], 0), "pass": 1, "broken": 1},  # type: ignore[call-overload]
        "model-b": {**dict.fromkeys(summary["classes"], 0), "broken": 4},  # type: ignore[call-overload]
    }
