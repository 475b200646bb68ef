"""Write the `dev2` or `dev3` pool (SOURCES.md) from local git copies of its two repositories.

    python benchmarks/realdiscards/dev2.py --mirrors DIR            # dev2: wrong values
    python benchmarks/realdiscards/dev2.py --mirrors DIR --pool dev3  # dev3: errors, split by problem
    python benchmarks/realdiscards/dev2.py --mirrors DIR --pool dev6  # dev6: the rest of `dev`'s problems

`dev2` is every Alisehen/LLMKernel kernel whose own GPU evaluation says `Outputs are not close`, for problems in
neither split of manifest.csv (so as far from `heldout` as `dev` is). Its files are third-party code and are not
committed: this writes them under `dev2/` (ignored), with `dev2/manifest.csv` in manifest.csv's layout (split
`dev2`, tasks under `dev2/tasks/`). Run them with `benchmarks/real_repair.py IDS --manifest
benchmarks/realdiscards/dev2/manifest.csv --split dev2`. DIR as for materialize.py.

`dev3` is every kernel of the same problems whose own GPU evaluation raised (compile, launch, shape errors, the
GPU's memory): real *broken* kernels. Its problems are split by a hash of their name into `dev3` (tuned on) and
`dev3-held` (measured only), so the measuring half shares no problem with the tuning half.

`dev6` is every other failed kernel (wrong values or an error) of the problems of manifest.csv's `dev` split that
manifest.csv itself does not hold: the same model and pipeline on `dev`'s own problems, all tuned on.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

from materialize import git_dir  # the sibling script: the same mirror layouts

HERE = Path(__file__).resolve().parent
LLMKERNEL = ("Alisehen/LLMKernel", "d078a38dfe4b331d7fc71ee22a9f013bf151bb73")
KERNELBENCH = ("ScalingIntelligence/KernelBench", "129232ea3c4cfa05c2dd5473bdb935d6246dc84b")
LEFT_OUT = {"level1:76", "level3:33"}  # LLMKernel's copy of 76 differs; 33 is heldout's 34 with another output
FIELDS = ("task", "candidate", "id", "model", "source", "source_verdict", "split", "module_mode")


def _git(mirrors: Path, repo: str, *args: str) -> str:
    command = ["git", "-C", str(git_dir(mirrors, repo)), *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{repo}: git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _taken_problems() -> set[str]:
    with (HERE / "provenance.csv").open(newline="") as handle:
        return {f"level{row['level']}:{row['problem']}" for row in csv.DictReader(handle)}


def _dev_problems() -> tuple[set[str], set[str]]:
    """manifest.csv's `dev` problems of LLMKernel (as `levelN:number`), and the kernel paths it already holds."""
    with (HERE / "manifest.csv").open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["source"] == LLMKERNEL[0]]
    tasks = [Path(r["task"]) for r in rows if r["split"] == "dev"]
    problems = {f"{task.parent.name}:{task.name.split('_', 1)[0]}" for task in tasks}
    return problems, {r["candidate"].removeprefix("candidates/Alisehen-LLMKernel/") for r in rows}


def _kernels(mirrors: Path, level: str, problem: str) -> list[tuple[str, str]]:
    """(kernel path, eval verdict message) pairs of one problem folder, or none where the pairing is unsure."""
    return [
        (kernel, "" if record.get("runnable") else str(record.get("message", "")))
        for kernel, record in paired(mirrors, LLMKERNEL[1], f"results/{level}/{problem}")
    ]


def paired(mirrors: Path, commit: str, base: str) -> list[tuple[str, dict[str, object]]]:
    """(kernel path, eval record) pairs of one LLMKernel problem folder at `commit`, in time order, or none where the
    pairing is unsure (counts differ, or an eval names another kernel file)."""
    repo = LLMKERNEL[0]
    files = _git(mirrors, repo, "ls-tree", "-r", "--name-only", commit, base).split()
    kernels = sorted(f for f in files if re.fullmatch(rf"{re.escape(base)}/code/kernel_\d+_\d+\.py", f))
    evals = sorted(f for f in files if re.fullmatch(rf"{re.escape(base)}/evaluation/eval_\d+\.json", f))
    if not kernels or len(kernels) != len(evals):
        return []
    pairs = []
    for kernel, evaluation in zip(kernels, evals, strict=True):
        record = json.loads(_git(mirrors, repo, "show", f"{commit}:{evaluation}"))
        named = record.get("candidate_file")
        if named and Path(str(named)).name != Path(kernel).name:
            return []
        pairs.append((kernel, record))
    return pairs


def _split(pool: str, task: str) -> str:
    if pool in ("dev2", "dev6"):
        return pool
    return "dev3" if hashlib.sha256(task.encode()).digest()[0] % 2 == 0 else "dev3-held"


def _wanted(pool: str, message: str) -> bool:
    """A pool's kernels by their eval's message: dev2 wrong values, dev3 anything else that failed, dev6 both."""
    wrong = "Outputs are not close" in message
    return wrong if pool == "dev2" else bool(message) and (pool == "dev6" or not wrong)


def build(mirrors: Path, out: Path, pool: str = "dev2") -> int:
    repo, commit = LLMKERNEL
    taken = _taken_problems()
    dev, held = _dev_problems()
    rows = []
    for level in ("level1", "level2", "level3"):
        for problem in _git(mirrors, repo, "ls-tree", "-d", "--name-only", commit, f"results/{level}/").split():
            name = Path(problem).name
            key = f"{level}:{name.split('_', 1)[0]}"
            if (key not in dev if pool == "dev6" else key in taken) or key in LEFT_OUT:
                continue
            task = f"{level}/{name}.py"
            for kernel, message in _kernels(mirrors, level, name):
                if not _wanted(pool, message) or kernel in held:
                    continue
                if not (out / "tasks" / task).is_file():
                    source = _git(mirrors, KERNELBENCH[0], "show", f"{KERNELBENCH[1]}:KernelBench/{task}")
                    (out / "tasks" / task).parent.mkdir(parents=True, exist_ok=True)
                    (out / "tasks" / task).write_text(source)
                candidate = f"candidates/{kernel}"
                (out / candidate).parent.mkdir(parents=True, exist_ok=True)
                (out / candidate).write_text(_git(mirrors, repo, "show", f"{commit}:{kernel}"))
                rows.append({
                    "task": task, "candidate": candidate, "id": f"{repo}/{kernel}", "model": "",
                    "source": repo, "source_verdict": "fail" if "Outputs are not close" in message else "error",
                    "split": _split(pool, task), "module_mode": "eval",
                })  # fmt: skip
    return write_manifest(out, rows)


def write_manifest(out: Path, rows: list[dict[str, str]]) -> int:
    """`out/manifest.csv` in manifest.csv's layout; the number of rows."""
    with (out / "manifest.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of git copies of the source repositories")
    parser.add_argument("--pool", choices=("dev2", "dev3", "dev6"), default="dev2", help="which pool (default: dev2)")
    parser.add_argument("--out", type=Path, help="where to write the pool (default: the pool's name, beside this)")
    args = parser.parse_args()
    out = args.out or HERE / args.pool
    print(f"{build(args.mirrors, out, args.pool)} {args.pool} kernel(s) written under {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
