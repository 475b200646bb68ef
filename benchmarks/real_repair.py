"""Offline repair of real near misses: `kope debug` (offline search, no tokens) on chosen real-discard candidates.

The candidates are ids of benchmarks/realdiscards/manifest.csv (one per line in IDS, or the rows of a triage
results.jsonl whose class before repair is `near-miss`), all of one split. Each is repaired with
`kope debug --json --device cpu --max-seconds S`; OUT/repairs.jsonl gets one row per candidate (a rerun skips
the ids it has) and the script prints a table: status, seconds, the accepted operator, false repairs (versions
right on every derived case but wrong at the task's own sizes, which the search refused).

Usage: .venv/bin/python benchmarks/real_repair.py IDS --split dev --out OUT [--seconds 180] [--workers 2]
       (the `dev2` pool: --manifest benchmarks/realdiscards/dev2/manifest.csv --split dev2, see realdiscards/dev2.py;
       `dev3`, broken kernels: --manifest benchmarks/realdiscards/dev3/manifest.csv --split dev3 or dev3-held;
       `dev4`, another pipeline: --manifest benchmarks/realdiscards/dev4/manifest.csv --split dev4 or dev4-held;
       `dev5`, a later run: --manifest benchmarks/realdiscards/dev5/manifest.csv --split dev5 or dev5-held;
       `dev6`, `dev`'s other kernels: --manifest benchmarks/realdiscards/dev6/manifest.csv --split dev6)
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
SET = HERE / "realdiscards"


def chosen(ids: Path, split: str, manifest: Path = SET / "manifest.csv") -> list[dict[str, str]]:
    rows = {r["id"]: r for r in csv.DictReader(manifest.open(newline=""))}
    if ids.suffix == ".jsonl":
        wanted = [json.loads(line)["id"] for line in ids.read_text().splitlines() if '"near-miss"' in line]
    else:
        wanted = [line.strip() for line in ids.read_text().splitlines() if line.strip()]
    return [rows[i] for i in dict.fromkeys(wanted) if i in rows and rows[i]["split"] == split]


def repair(row: dict[str, str], out: Path, seconds: float, root: Path = SET) -> dict[str, object]:
    kope = str(Path(sys.executable).parent / "kope")
    name = row["id"].replace("/", "__")
    command = [kope, "debug", str(root / "tasks" / row["task"]), str(root / row["candidate"]), "--json"]
    command += ["--device", "cpu", "--module-mode", row.get("module_mode") or "train"]  # as its pipeline ran it
    command += ["--out", str(out / "repaired" / f"{name}.py"), "--max-seconds", str(seconds)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=seconds * 4 + 300)
    except subprocess.TimeoutExpired:
        return {"id": row["id"], "task": row["task"], "status": "timeout", "error": f"over {seconds * 4 + 300:.0f} s"}
    try:
        report = json.loads(done.stdout[done.stdout.index("{") :])
    except ValueError:
        return {"id": row["id"], "status": "error", "error": done.stderr[-400:]}
    transcript = Path(report.get("transcript") or "")
    searches = [
        event["result"]
        for event in map(json.loads, transcript.read_text().splitlines() if transcript.is_file() else [])
        if event.get("event") == "search"
    ]
    accepted = [t for s in searches for t in s.get("trials", []) if t.get("verdict") == "accepted"]
    return {
        "id": row["id"],
        "task": row["task"],
        "status": report.get("status"),
        "seconds": report.get("seconds"),
        "tokens": (report.get("tokens") or {}).get("prompt", 0),
        "operator": accepted[0]["operator"] if accepted else "",
        "description": accepted[0]["description"] if accepted else "",
        "false_repairs": sum(int(s.get("false_repairs", 0)) for s in searches),
        "own_size_case": next((s.get("own_size_case") for s in searches if s.get("own_size_case")), ""),
        "evaluations": report.get("evaluations"),
        "stop_reason": report.get("stop_reason"),
        "error": done.stderr[-400:] if report.get("status") == "error" else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", type=Path)
    splits = ("dev", "heldout", "dev2", "dev3", "dev3-held", "dev4", "dev4-held", "dev5", "dev5-held", "dev6")
    parser.add_argument("--split", default="dev", choices=splits)
    parser.add_argument("--manifest", type=Path, default=SET / "manifest.csv", help="the set (default: manifest.csv)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "repairs.jsonl"
    done = {json.loads(line)["id"] for line in results.read_text().splitlines()} if results.is_file() else set()
    todo = [r for r in chosen(args.ids, args.split, args.manifest) if r["id"] not in done]
    root = args.manifest.resolve().parent
    missing = [p for r in todo for p in (root / "tasks" / r["task"], root / r["candidate"]) if not p.is_file()]
    if missing:  # third-party files are not committed: materialize.py or dev2.py writes them
        raise SystemExit(
            f"{len(missing)} files of {args.manifest} are missing, the first {missing[0]}: run "
            "benchmarks/realdiscards/materialize.py (or dev2.py) --mirrors DIR, or pass --manifest"
        )
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        for future in as_completed([pool.submit(repair, r, args.out, args.seconds, root) for r in todo]):
            row = future.result()
            with results.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            print(f"{row['status']}: {row['id']} {row.get('operator', '')}", file=sys.stderr, flush=True)
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    print("| candidate | status | accepted edit | false repairs | seconds |\n|---|---|---|---:|---:|")
    for row in rows:
        short = row["id"].split("/results/")[-1].replace("/code/", " ")
        print(
            f"| {short} | {row['status']} | {row.get('operator', '')} | {row.get('false_repairs', 0)} | "
            f"{row.get('seconds', '')} |"
        )
    repaired = sum(r["status"] == "repaired" for r in rows)
    false = sum(int(r.get("false_repairs", 0)) for r in rows)
    print(f"\nrepaired {repaired} of {len(rows)}; false repairs refused {false}; tokens 0")


if __name__ == "__main__":
    main()
