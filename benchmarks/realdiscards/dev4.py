"""Write the `dev4` pool (SOURCES.md, section 5) from a local git copy of adityakotha03/tritonLLM.

    python benchmarks/realdiscards/dev4.py --mirrors DIR

A second pipeline's kernels, by other models than every earlier pool's: the zero-shot Triton kernels that
`qwen3_30b` and a fine-tuned `qwen3_4b` wrote for KernelBench levels 1-3 (no verdict recorded: `unknown`), and the
kernels of its search runs (`gpt-5`, `gemini-2.5-pro`), with the verdict its A100 evaluation recorded. Files with
no `@triton.jit` (PyTorch only, or CUDA) are left out, and so are the problems of manifest.csv's `heldout` split, so
that nothing here is a `heldout` problem. Problems are split by a hash of their task path into `dev4` (tuned on) and
`dev4-held` (measured only). Tasks are KernelBench v0.1 (the repository's `KernelBench/` copy is byte-identical to
it). Its files are third-party code and are not committed: this writes them under `dev4/` (ignored), with
`dev4/manifest.csv` in manifest.csv's layout. DIR as for materialize.py.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from pathlib import Path

from dev2 import KERNELBENCH, _git, write_manifest

HERE = Path(__file__).resolve().parent
TRITONLLM = ("adityakotha03/tritonLLM", "0e70fe59d07bd0f419ae116e53e9c8e3f3165706")
ZEROSHOT = {"qwen3_30b": "qwen3-30b", "qwen3_4b_finetuned": "qwen3-4b (fine-tuned)"}


def _heldout_problems() -> set[str]:
    """`level1:13`-style keys of the problems in manifest.csv's heldout split."""
    with (HERE / "manifest.csv").open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["split"] == "heldout"]
    return {f"{Path(row['task']).parent.name}:{Path(row['task']).name.split('_', 1)[0]}" for row in rows}


def _split(task: str) -> str:
    return "dev4" if hashlib.sha256(task.encode()).digest()[0] % 2 == 0 else "dev4-held"


def _verdict(result: dict[str, object]) -> str:
    """The search run's A100 verdict: right, wrong values, or anything else that failed."""
    if result.get("correctness"):
        return "pass"
    metadata = result.get("metadata")
    wrong = isinstance(metadata, dict) and "correctness_issue" in metadata
    return "fail" if result.get("compiled") and wrong else "error"


def _problem_tasks(mirrors: Path) -> dict[str, str]:
    """Problem file name (`23_Softmax`) → task path (`level1/23_Softmax.py`), from the KernelBench copy."""
    repo, commit = TRITONLLM
    names = _git(mirrors, repo, "ls-tree", "-r", "--name-only", commit, "KernelBench/").split()
    return {Path(name).stem: name.removeprefix("KernelBench/") for name in names if name.endswith(".py")}


def _kernels(mirrors: Path) -> list[tuple[str, str, str, str, str]]:
    """(task, candidate path, id, model, verdict) of every Triton kernel the repository holds."""
    repo, commit = TRITONLLM
    tasks = _problem_tasks(mirrors)
    found = []
    files = _git(mirrors, repo, "ls-tree", "-r", "--name-only", commit, "output/").split()
    for path in files:
        parts = path.split("/")
        if len(parts) == 5 and parts[1] == "zeroshot" and parts[2] in ZEROSHOT and path.endswith(".py"):
            task = f"{parts[3]}/{parts[4]}"
            if task in tasks.values():
                found.append((task, path, f"{repo}/{path}", ZEROSHOT[parts[2]], "unknown"))
        elif len(parts) == 5 and parts[1] == "search_results" and parts[4].startswith("round_"):
            record = json.loads(_git(mirrors, repo, "show", f"{commit}:{path}"))
            searched = tasks.get(str(record["metadata"]["problem_name"]))
            for kernel in record["kernels"] if searched else ():
                kid = f"{repo}/{path}#{kernel['kernel_id']}"
                model, verdict = parts[2].removeprefix("openai-"), _verdict(kernel["eval_result"])
                found.append((str(searched), f"{path}#{kernel['kernel_id']}", kid, model, verdict))
    return found


def _source(mirrors: Path, candidate: str) -> str:
    repo, commit = TRITONLLM
    path, _, kernel_id = candidate.partition("#")
    text = _git(mirrors, repo, "show", f"{commit}:{path}")
    if not kernel_id:
        return text
    return next(str(k["code"]) for k in json.loads(text)["kernels"] if k["kernel_id"] == kernel_id)


def build(mirrors: Path, out: Path) -> int:
    held = _heldout_problems()
    rows = []
    for task, candidate, kid, model, verdict in _kernels(mirrors):
        level, name = task.split("/")
        if f"{level}:{name.split('_', 1)[0]}" in held:
            continue
        source = _source(mirrors, candidate)
        if "@triton.jit" not in source:
            continue
        if not (out / "tasks" / task).is_file():
            text = _git(mirrors, KERNELBENCH[0], "show", f"{KERNELBENCH[1]}:KernelBench/{task}")
            (out / "tasks" / task).parent.mkdir(parents=True, exist_ok=True)
            (out / "tasks" / task).write_text(text)
        local = "candidates/" + candidate.replace("#", "/").removesuffix(".json").replace(".json/", "/")
        local = local if local.endswith(".py") else local + ".py"
        (out / local).parent.mkdir(parents=True, exist_ok=True)
        (out / local).write_text(source)
        rows.append({
            "task": task, "candidate": local, "id": kid, "model": model, "source": TRITONLLM[0],
            "source_verdict": verdict, "split": _split(task), "module_mode": "train",
        })  # fmt: skip
    return write_manifest(out, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of git copies of the source repositories")
    parser.add_argument("--out", type=Path, default=HERE / "dev4", help="where to write the pool (default: dev4/)")
    args = parser.parse_args()
    print(f"{build(args.mirrors, args.out)} dev4 kernel(s) written under {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
