"""kope's triage of real discards: the source verdict × kope class table and the causes of `broken` rows.

The set is benchmarks/realdiscards (see its README): LLM-written Triton candidates for KernelBench tasks,
each with the verdict of its own pipeline's GPU evaluation. This script writes the chosen split's
manifest to OUT, runs `kope triage` on it through the CLI (a rerun on the same OUT resumes: candidates
that already have a row are not run again), then reads OUT/results.jsonl and prints Markdown tables:
source verdict × kope class before repair (and after), `broken` rows by error kind with one example
message each, how many broken rows a device error causes, and the findings of the `cheat` rows.

Usage: .venv/bin/python benchmarks/real_discards.py [--split dev|heldout|all] [--limit N] [--out DIR]
           [--workers N] [--no-repair] [--tables-only] [-- EXTRA KOPE TRIAGE FLAGS]

`--no-repair` classifies without repairing near misses (`kope triage --no-repair`: every near
miss gets `repair: skipped`). Flags after `--` go
to `kope triage` as they are (e.g. `-- --device cpu --trials 1`). The heldout split is for measuring
only: never tune on it.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SET = HERE / "realdiscards"
VERDICTS = ("pass", "fail", "error", "unknown")
CLASSES = ("pass", "near-miss", "broken", "cheat", "error")
DEVICE = re.compile(r"cuda|device|Torch not compiled with CUDA", re.IGNORECASE)
"""A device error: the message mentions cuda / CUDA / is_cuda / device / `Torch not compiled with CUDA`."""


@dataclass(frozen=True)
class Entry:
    """A manifest row: the candidate, its task, and what its source pipeline said of it."""

    id: str
    task: str
    candidate: Path
    model: str
    source: str
    verdict: str
    split: str
    module_mode: str = "train"
    """The mode the source pipeline ran the models in (LLMKernel calls `.eval()`; see SOURCES.md)."""


@dataclass(frozen=True)
class Row:
    """What kope said of one candidate (a row of results.jsonl, the fields used here)."""

    id: str
    before: str
    after: str
    error_kind: str | None
    error_message: str | None
    findings: tuple[str, ...]
    error: str | None


def read_manifest(manifest: Path, split: str, limit: int | None, verdict: str | None = None) -> list[Entry]:
    with manifest.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    entries = [
        Entry(
            id=row["id"],
            task=row["task"],
            candidate=(manifest.parent / row["candidate"]).resolve(),
            model=row["model"],
            source=row["source"],
            verdict=row["source_verdict"],
            split=row["split"],
            module_mode=row.get("module_mode") or "train",
        )
        for row in rows
        if (split == "all" or row["split"] == split) and (verdict is None or row["source_verdict"] == verdict)
    ]
    return entries[:limit] if limit is not None else entries


def write_manifest(entries: Sequence[Entry], target: Path) -> None:
    """The chosen rows as a kope manifest (candidate paths absolute, so it may live anywhere)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["task", "candidate", "id", "model", "source", "source_verdict", "split", "module_mode"])
        for e in entries:
            writer.writerow([e.task, str(e.candidate), e.id, e.model, e.source, e.verdict, e.split, e.module_mode])


def kope_command() -> list[str]:
    beside = Path(sys.executable).parent / "kope"
    found = str(beside) if beside.is_file() else shutil.which("kope")
    if found is None:
        raise SystemExit("no `kope` command found (install kope, or run this with the venv's python)")
    return [found]


def run_triage(tasks: Path, manifest: Path, out: Path, workers: int, no_repair: bool, extra: Sequence[str]) -> int:
    command = [*kope_command(), "triage", str(tasks), str(manifest), "--out", str(out), "--workers", str(workers)]
    if no_repair:
        command += ["--no-repair"]
    command += list(extra)
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    return subprocess.run(command, check=False).returncode


def read_rows(results: Path) -> dict[str, Row]:
    """The first row per candidate id of results.jsonl (unreadable lines skipped, as kope does)."""
    rows: dict[str, Row] = {}
    if not results.is_file():
        return rows
    for line in results.read_text().splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict) or "id" not in data or data["id"] in rows:
            continue
        rows[data["id"]] = Row(
            id=data["id"],
            before=data.get("before", "error"),
            after=data.get("after", "error"),
            error_kind=data.get("error_kind"),
            error_message=data.get("error_message"),
            findings=tuple(data.get("findings") or ()),
            error=data.get("error"),
        )
    return rows


def _cell(text: str | None, width: int = 160) -> str:
    if not text or not text.strip():
        return "*(empty message)*"
    flat = " ".join(text.split())
    flat = flat if len(flat) <= width else flat[: width - 1] + "…"
    return "`" + flat.replace("`", "'").replace("|", "\\|") + "`"


def verdict_table(entries: Sequence[Entry], rows: dict[str, Row], when: str) -> list[str]:
    counts = Counter((e.verdict, getattr(rows[e.id], when)) for e in entries if e.id in rows)
    lines = [
        f"| source verdict \\ kope ({when}) | " + " | ".join(CLASSES) + " | total |",
        "|---|" + "---:|" * (len(CLASSES) + 1),
    ]
    for verdict in (*VERDICTS, "all"):
        cells = [sum(n for (v, k), n in counts.items() if k == name and verdict in (v, "all")) for name in CLASSES]
        if sum(cells):
            label = f"**{verdict}**" if verdict == "all" else verdict
            lines.append(f"| {label} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    return lines


def is_device_error(row: Row) -> bool:
    return bool(row.error_message and DEVICE.search(row.error_message))


BARE_ASSERT = re.compile(r"AssertionError:?\s*$")
CUDA_ASSERT = re.compile(r"^\s*assert\b.*\bis_cuda\b", re.MULTILINE)


def is_hidden_device_error(row: Row, candidate: Path) -> bool:
    """A bare `AssertionError` (no message) from a candidate that asserts `is_cuda`: a device error kope
    reports without its text, so the message test above misses it."""
    if not row.error_message or not BARE_ASSERT.search(row.error_message.strip()):
        return False
    try:
        return bool(CUDA_ASSERT.search(candidate.read_text(errors="replace")))
    except OSError:
        return False


def broken_table(entries: Sequence[Entry], rows: dict[str, Row]) -> list[str]:
    broken = [rows[e.id] for e in entries if e.id in rows and rows[e.id].before == "broken"]
    kinds = Counter(r.error_kind or "(none)" for r in broken)
    lines = ["| error kind | rows | of which device errors | example message |", "|---|---:|---:|---|"]
    for kind, n in kinds.most_common():
        mine = [r for r in broken if (r.error_kind or "(none)") == kind]
        device = sum(is_device_error(r) for r in mine)
        example = next((r for r in mine if r.error_message and r.error_message.strip()), mine[0])
        lines.append(f"| {kind} | {n} | {device} | {_cell(example.error_message)} |")
    return lines


def message_table(entries: Sequence[Entry], rows: dict[str, Row], top: int = 12) -> list[str]:
    """The most frequent messages of broken rows (numbers and quoted names folded), with their count."""

    def fold(text: str | None) -> str:
        head = " ".join((text or "").split())[:200]
        return re.sub(r"\d+", "N", head)

    broken = [rows[e.id] for e in entries if e.id in rows and rows[e.id].before == "broken"]
    folded = Counter(fold(r.error_message) for r in broken)
    lines = ["| rows | message (digits folded to N) |", "|---:|---|"]
    lines += [f"| {n} | {_cell(text or None)} |" for text, n in folded.most_common(top)]
    return lines


def findings_table(entries: Sequence[Entry], rows: dict[str, Row]) -> list[str]:
    cheats = [(e, rows[e.id]) for e in entries if e.id in rows and rows[e.id].before == "cheat"]
    found = Counter(f for _, r in cheats for f in r.findings)
    by_verdict = Counter(e.verdict for e, _ in cheats)
    lines = [
        "cheat rows by source verdict: " + ", ".join(f"{v} {by_verdict[v]}" for v in VERDICTS if by_verdict[v]),
        "",
        "| finding | cheat rows |",
        "|---|---:|",
    ]
    lines += [f"| {name} | {n} |" for name, n in found.most_common()]
    return lines


def report(entries: Sequence[Entry], rows: dict[str, Row], split: str) -> str:
    seen = [e for e in entries if e.id in rows]
    broken = [rows[e.id] for e in seen if rows[e.id].before == "broken"]
    device = sum(is_device_error(r) for r in broken)
    hidden = sum(
        is_hidden_device_error(rows[e.id], e.candidate)
        for e in seen
        if rows[e.id].before == "broken" and not is_device_error(rows[e.id])
    )
    failed = [rows[e.id] for e in seen if rows[e.id].before == "error"]
    share = f"{device / len(seen):.0%}" if seen else "n/a"
    out = [
        f"## Real discards, split `{split}`: {len(seen)} of {len(entries)} candidates triaged",
        "",
        "### Source verdict × kope class, before repair",
        "",
        *verdict_table(seen, rows, "before"),
        "",
        "### Source verdict × kope class, after repair",
        "",
        *verdict_table(seen, rows, "after"),
        "",
        f"### Broken rows by error kind ({len(broken)} rows)",
        "",
        *broken_table(seen, rows),
        "",
        f"Broken by a device error (message mentions cuda / device): **{device} of {len(broken)} broken rows**"
        f" ({share} of all {len(seen)} rows). Besides these, {hidden} broken row(s) end in a bare"
        " `AssertionError` (empty message) from a candidate that asserts `is_cuda`: with them, device errors"
        f" break {device + hidden} rows.",
        "",
        "### Most frequent broken messages",
        "",
        *message_table(seen, rows),
        "",
        "### Cheat rows",
        "",
        *findings_table(seen, rows),
    ]
    if failed:
        out += ["", f"### kope itself failed on {len(failed)} row(s)", ""]
        out += [f"- {r.id}: {_cell(r.error)}" for r in failed]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    args_in = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args_in:
        cut = args_in.index("--")
        args_in, extra = args_in[:cut], args_in[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="dev")
    parser.add_argument("--limit", type=int, default=None, help="the first N candidates of the split only")
    parser.add_argument(
        "--verdict", choices=("pass", "fail", "error", "unknown"), default=None, help="only this source verdict"
    )
    parser.add_argument("--out", type=Path, default=Path("results/real-discards"), help="kope's results folder")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--no-repair", action="store_true", help="classify only (kope triage --no-repair)")
    parser.add_argument("--tables-only", action="store_true", help="do not run kope: read OUT/results.jsonl")
    parser.add_argument("--manifest", type=Path, default=SET / "manifest.csv")
    parser.add_argument("--tasks", type=Path, default=SET / "tasks")
    args = parser.parse_args(args_in)
    entries = read_manifest(args.manifest, args.split, args.limit, args.verdict)
    if not args.tables_only:
        missing = [e for e in entries if not e.candidate.is_file()]
        if missing or not args.tasks.is_dir():
            raise SystemExit(
                f"{len(missing)} candidate file(s) missing (e.g. {missing[0].candidate if missing else args.tasks}): "
                "write them with benchmarks/realdiscards/materialize.py --mirrors DIR"
            )
        narrowed = "".join(f".{part}" for part in (args.verdict, args.limit) if part is not None)
        chosen = args.out / f"manifest.{args.split}{narrowed}.csv"
        write_manifest(entries, chosen)
        code = run_triage(args.tasks, chosen, args.out, args.workers, args.no_repair, extra)
        if code != 0:
            print(f"kope triage exited with {code}; tables of the rows it wrote:", file=sys.stderr)
    print(report(entries, read_rows(args.out / "results.jsonl"), args.split))


if __name__ == "__main__":
    main()
