"""Write the real-discard set's task and candidate files from local git copies of their source repositories.

    python benchmarks/realdiscards/materialize.py --mirrors DIR

The files are third-party code (see SOURCES.md for each repository, commit and licence), so they are
not committed: `provenance.csv` names, for every candidate of `manifest.csv`, the repository, commit,
path and sha256 of its bytes, and of its KernelBench task. DIR holds one git directory per repository,
as `DIR/OWNER+NAME/repo` (the layout of the search tool's snapshots) or `DIR/OWNER+NAME` or
`DIR/OWNER/NAME`. A candidate committed inside a JSON record (an OpenEvolve program: `path` ends in
`.json`) is that record's `code` field. Every file written is checked against its recorded sha256.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELBENCH = "ScalingIntelligence/KernelBench"


def git_dir(mirrors: Path, repo: str) -> Path:
    """The git directory of `repo`'s copy under `mirrors` (the layouts the module's docstring names)."""
    owner, name = repo.split("/", 1)
    for place in (mirrors / f"{owner}+{name}" / "repo", mirrors / f"{owner}+{name}", mirrors / owner / name):
        if place.is_dir():
            return place
    raise SystemExit(f"no git copy of {repo} under {mirrors}")


def _show(mirrors: Path, repo: str, commit: str, path: str) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(git_dir(mirrors, repo)), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{repo}@{commit}:{path}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _write(target: Path, data: bytes, sha: str) -> None:
    found = hashlib.sha256(data).hexdigest()
    if found != sha:
        raise SystemExit(f"{target}: sha256 {found}, expected {sha}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def materialize(mirrors: Path, root: Path = HERE) -> int:
    with (root / "manifest.csv").open(newline="") as handle:
        manifest = {row["id"]: row for row in csv.DictReader(handle)}
    with (root / "provenance.csv").open(newline="") as handle:
        provenance = list(csv.DictReader(handle))
    written = 0
    for row in provenance:
        entry = manifest[row["id"]]
        data = _show(mirrors, row["repo"], row["commit"], row["path"])
        if row["path"].endswith(".json"):
            data = json.loads(data)["code"].encode()
        _write(root / entry["candidate"], data, row["sha256"])
        task = root / "tasks" / entry["task"]
        if not task.is_file():
            source = _show(mirrors, KERNELBENCH, row["kernelbench_commit"], row["kernelbench_path"])
            _write(task, source, row["task_sha256"])
        written += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of git copies of the source repositories")
    args = parser.parse_args()
    print(f"{materialize(args.mirrors)} candidate(s) written under {HERE}", file=sys.stderr)


if __name__ == "__main__":
    main()
