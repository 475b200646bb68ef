"""Write the `dev5` pool (SOURCES.md): the kernels of Alisehen/LLMKernel's later `method2` branch.

    python benchmarks/realdiscards/dev5.py --mirrors DIR

The branch holds a second run of the same pipeline (2025-12-23 to 2026-01-08) that `main`, where every other LLMKernel
pool comes from, does not: its kernel files not on `main` at the pool's commit are the pool. Each is paired with its
eval file as `dev2` pairs them (time order, checked against the eval's `candidate_file`; folders whose counts or
names disagree are skipped). Problems of manifest.csv's `heldout` split are left out, so nothing here is a `heldout`
problem, and so are dev2's two left out (SOURCES.md) and problems with no KernelBench v0.1 task of the same name
(the run's own variants, `*_worth_case`).
Problems are split by a hash of their task path into `dev5` (tuned on) and `dev5-held` (measured only).

The run's own check passed outputs within an absolute `tolerance` of 1 (its eval files record it and the largest
error); verdicts are normalised against KernelBench's 1e-2 instead: `pass` where the run's largest error is at most
1e-2, `fail` where it is larger, `error` where the eval raised. The eval files record no output magnitude, so this
reads the absolute part of KernelBench's check only (`allclose(atol=1e-2, rtol=1e-2)` also passes an error within
1e-2 of the output's size): a `fail` row whose outputs are large (a product over thousands of terms) may pass
KernelBench; kope's own verdict is the one the measurements use. Its files are third-party code and are not
committed: this writes them under `dev5/` (ignored), with `dev5/manifest.csv` in manifest.csv's layout.
DIR as for materialize.py.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from dev2 import KERNELBENCH, LEFT_OUT, LLMKERNEL, _git, paired, write_manifest
from dev4 import _heldout_problems

HERE = Path(__file__).resolve().parent
BRANCH = "e2969419d10d89be03e94e1f8547225a962d8f27"  # refs/heads/method2, 2026-01-08
WRONG = 1e-2  # KernelBench's tolerance, against which the run's largest error is read


def _split(task: str) -> str:
    return "dev5" if hashlib.sha256(task.encode()).digest()[0] % 2 == 0 else "dev5-held"


def _verdict(record: dict[str, object]) -> str:
    if not record.get("runnable"):
        return "error"
    error = record.get("max_abs_err")
    return "fail" if isinstance(error, int | float) and error > WRONG else "pass"


def build(mirrors: Path, out: Path) -> int:
    repo, main = LLMKERNEL
    on_main = set(_git(mirrors, repo, "ls-tree", "-r", "--name-only", main, "results/").split())
    files = _git(mirrors, repo, "ls-tree", "-r", "--name-only", BRANCH, "results/").split()
    folders: set[str] = set()
    for path in files:
        parts = path.split("/")
        if len(parts) >= 4 and parts[1].startswith("level"):
            folders.add("/".join(parts[:3]))
    held = _heldout_problems()
    rows = []
    for folder in sorted(folders):
        _, level, name = folder.split("/")
        if f"{level}:{name.split('_', 1)[0]}" in held | LEFT_OUT:
            continue
        task = f"{level}/{name}.py"
        for kernel, record in paired(mirrors, BRANCH, folder):
            if kernel in on_main:
                continue
            if not (out / "tasks" / task).is_file():
                try:
                    text = _git(mirrors, KERNELBENCH[0], "show", f"{KERNELBENCH[1]}:KernelBench/{task}")
                except SystemExit:  # no such v0.1 problem: the run's own variant
                    break
                (out / "tasks" / task).parent.mkdir(parents=True, exist_ok=True)
                (out / "tasks" / task).write_text(text)
            source = _git(mirrors, repo, "show", f"{BRANCH}:{kernel}")
            if "@triton.jit" not in source:
                continue
            candidate = f"candidates/{kernel}"
            (out / candidate).parent.mkdir(parents=True, exist_ok=True)
            (out / candidate).write_text(source)
            rows.append({
                "task": task, "candidate": candidate, "id": f"{repo}@method2/{kernel}", "model": "",
                "source": repo, "source_verdict": _verdict(record), "split": _split(task), "module_mode": "eval",
            })  # fmt: skip
    return write_manifest(out, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of git copies of the source repositories")
    parser.add_argument("--out", type=Path, default=HERE / "dev5", help="where to write the pool (default: dev5/)")
    args = parser.parse_args()
    print(f"{build(args.mirrors, args.out)} dev5 kernel(s) written under {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
