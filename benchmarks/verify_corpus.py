"""Verify a near-miss corpus: every entry runs and fails the way its bug label says it should.

For each entry of a manifest (src/kope/corpora/handwritten/manifest.json by default; `--manifest
src/kope/corpora/handwritten2/manifest.json` for the second hand-written corpus, `handwritten3/` for the
third) the candidate is
evaluated with kope's evaluator on all its task's cases, one file at a time, and a table is printed:
file, label, status, error kind, wrong elements (over all cases), whether the visible case fails
too, seconds. A near miss must fail with
wrong values (status `fail`, no error); an entry whose `expect` names an error kind must fail with that
kind. The script exits 1 if any entry passes, is rejected, or fails some other way, so a corpus whose
bugs were fixed by accident, or which broke for an unrelated reason, is caught before it is measured on.

Entries marked `"needs": "autotune"` (the first corpus's, written before the CPU interpreter ran
`@triton.autotune`) are, with `--autotune-shim` (the default), evaluated through a copy whose autotune
decorator is removed and the first config's values passed at the launch, i.e. the same kernel without
the decorator; `--no-autotune-shim` evaluates the file as written. Autotuned entries without the
marker (the second corpus's) are always evaluated as written: the interpreter runs their configs.

Usage: .venv/bin/python benchmarks/verify_corpus.py [--manifest PATH] [--only NAME ...] [--no-autotune-shim]
       [--markdown VERIFIED.md]   (also write the table, file names whole, as Markdown)
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kope.evaluate import EvalOptions, Evaluator
from kope.ops import get_op
from kope.protocol.results import EvalResult

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MANIFEST = ROOT / "src" / "kope" / "corpora" / "handwritten" / "manifest.json"
OPTIONS = EvalOptions(trials=1)


def without_autotune(source: str) -> str:
    """The same candidate with its `@triton.autotune(...)` decorators removed and their first config's
    values passed at each launch of the kernel instead: the kernel the autotuner would run first.

    A source edit rather than a stand-in decorator, so that the integrity gates see an ordinary launch.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, int, str]] = []  # (line, col, end_line, end_col, text), 1-based lines
    configs: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "triton.autotune":
                configs[node.name] = _first_config_keywords(decorator)
                edits.append((decorator.lineno, 0, _end(decorator)[0] + 1, 0, ""))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Subscript)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in configs
        ):
            line, col = _end(node)
            col -= 1  # before the closing parenthesis
            arguments: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
            last = max(arguments, key=_end, default=None)
            trailing = last is not None and "," in _between(lines, _end(last), line, col)
            sep = "" if last is None else " " if trailing else ", "
            edits.append((line, col, line, col, sep + configs[node.func.value.id]))
    offsets = [0]
    for text in lines:
        offsets.append(offsets[-1] + len(text))
    out = source
    for line, col, end_line, end_col, text in sorted(edits, reverse=True):
        begin = offsets[line - 1] + col
        finish = offsets[end_line - 1] + end_col if end_line <= len(lines) else len(source)
        out = out[:begin] + text + out[finish:]
    return out


def _end(node: ast.expr | ast.keyword) -> tuple[int, int]:
    return node.end_lineno or 0, node.end_col_offset or 0


def _between(lines: list[str], start: tuple[int, int], line: int, col: int) -> str:
    """The source text from `start` (a node's end) to (line, col)."""
    end_line, end_col = start
    if end_line == line:
        return lines[line - 1][end_col:col]
    return lines[end_line - 1][end_col:] + "".join(lines[end_line : line - 1]) + lines[line - 1][:col]


def _first_config_keywords(decorator: ast.Call) -> str:
    """`NAME=VALUE, ...` for the first `triton.Config({...}, num_warps=..)` of an autotune decorator."""
    configs = next((k.value for k in decorator.keywords if k.arg == "configs"), None)
    if configs is None and decorator.args:
        configs = decorator.args[0]
    if not isinstance(configs, ast.List | ast.Tuple) or not configs.elts:
        raise ValueError("autotune configs are not a literal list")
    first = configs.elts[0]
    if not isinstance(first, ast.Call) or not first.args:
        raise ValueError("the first autotune config is not a triton.Config(...) call")
    values = ast.literal_eval(first.args[0])
    values |= {k.arg: ast.literal_eval(k.value) for k in first.keywords if k.arg in ("num_warps", "num_stages")}
    return ", ".join(f"{name}={value!r}" for name, value in values.items())


@dataclass(frozen=True)
class Row:
    file: str
    label: str
    status: str
    error_kind: str
    wrong: int
    visible_fails: bool
    """Whether a visible case fails too (else the bug shows only on hidden cases)."""
    seconds: float
    ok: bool
    shimmed: bool


def task_path(manifest: Path, entry: dict) -> Path:
    if "task" in entry:
        return (manifest.parent / entry["task"]).resolve()
    return get_op(entry["op"]).task_path


def expected_ok(entry: dict, result: EvalResult) -> bool:
    """A wrong-values failure, or the error kind the entry says it is meant to raise."""
    expect = entry.get("expect", "fail")
    if expect == "fail":
        return result.status == "fail" and result.error is None and any(not c.passed for c in result.cases)
    return result.status == "error" and result.error is not None and result.error.kind == expect


def verify(manifest: Path, only: set[str], shim: bool) -> list[Row]:
    entries = json.loads(manifest.read_text())
    rows: list[Row] = []
    with Evaluator() as evaluator, tempfile.TemporaryDirectory(prefix="kope-verify-") as tmp:
        for entry in entries:
            if only and Path(entry["file"]).stem not in only and entry["file"] not in only:
                continue
            candidate = manifest.parent / entry["file"]
            shimmed = shim and entry.get("needs") == "autotune"
            if shimmed:
                copy = Path(tmp) / Path(entry["file"]).name
                copy.write_text(without_autotune(candidate.read_text()))
                candidate = copy
            start = time.perf_counter()
            result = evaluator.evaluate(task_path(manifest, entry), candidate, options=OPTIONS)
            seconds = time.perf_counter() - start
            wrong = sum(c.mismatch_count or 0 for c in result.cases)
            rows.append(
                Row(
                    file=entry["file"],
                    label=entry["label"],
                    status=result.status,
                    error_kind=result.error.kind if result.error else "",
                    wrong=wrong,
                    visible_fails=any(c.visible and not c.passed for c in result.cases),
                    seconds=seconds,
                    ok=expected_ok(entry, result),
                    shimmed=shimmed,
                )
            )
            row = rows[-1]
            print(
                f"{row.file}: {row.status} {row.error_kind} {row.wrong} {row.seconds:.1f}s", file=sys.stderr, flush=True
            )
    return rows


def render(rows: list[Row], manifest: Path) -> Table:
    table = Table(title=f"{manifest.relative_to(ROOT) if manifest.is_relative_to(ROOT) else manifest}")
    for column in ("file", "label", "status", "error kind", "wrong elements", "visible case", "seconds", "as labelled"):
        table.add_column(column, justify="right" if column in ("wrong elements", "seconds") else "left")
    for row in rows:
        name = row.file + (" (shim)" if row.shimmed else "")
        table.add_row(
            name,
            row.label,
            row.status,
            row.error_kind or "-",
            str(row.wrong),
            "fails" if row.visible_fails else "passes",
            f"{row.seconds:.1f}",
            "yes" if row.ok else "NO",
        )
    return table


def markdown(rows: list[Row], manifest: Path, summary: str) -> str:
    """The same table as Markdown, file names whole (a corpus's `VERIFIED.md`), then the summary line."""
    name = manifest.relative_to(ROOT) if manifest.is_relative_to(ROOT) else manifest
    lines = [
        f"# Verified: `{name}`",
        "",
        "`benchmarks/verify_corpus.py --manifest " + str(name) + "`; one trial per case, every case.",
        "",
        "| file | label | status | error kind | wrong elements | visible case | seconds | as labelled |",
        "|---|---|---|---|---:|---|---:|---|",
    ]
    for row in rows:
        shim = " (shim)" if row.shimmed else ""
        visible = "fails" if row.visible_fails else "passes"
        lines.append(
            f"| `{row.file}`{shim} | {row.label} | {row.status} | {row.error_kind or '-'} | {row.wrong} | "
            f"{visible} | {row.seconds:.1f} | {'yes' if row.ok else 'NO'} |"
        )
    return "\n".join([*lines, "", summary, ""])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    parser.add_argument("--only", nargs="*", default=[], help="file names (with or without .py) to verify")
    parser.add_argument("--autotune-shim", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown here (a VERIFIED.md)")
    args = parser.parse_args()
    manifest = args.manifest.resolve()
    rows = verify(manifest, set(args.only), args.autotune_shim)
    console = Console(width=140)
    console.print(render(rows, manifest))
    bad = [row.file for row in rows if not row.ok]
    ops = len({json.dumps(e.get("op") or e.get("task")) for e in json.loads(manifest.read_text())})
    summary = (
        f"{len(rows)} entries over {ops} operators, {len(rows) - len(bad)} fail as labelled, "
        f"{sum(r.visible_fails for r in rows)} of them on the visible case; "
        f"{sum(r.seconds for r in rows):.0f} s in all; {platform.machine()}, Python {platform.python_version()}"
    )
    console.print(summary)
    if args.markdown:
        args.markdown.write_text(markdown(rows, manifest, summary))
    if bad:
        console.print("not as labelled: " + ", ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
