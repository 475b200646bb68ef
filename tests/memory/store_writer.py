"""A writer process for the store's concurrency tests: RUNS runs, each written atomically under a key.

    python store_writer.py URL WRITER RUNS [HOLD_AT MARKER]

Each run is a task, a run, three steps (version, decision, evaluation, edges) and its end. With
HOLD_AT, the writer stops inside run HOLD_AT's transaction (after its steps, before the end), writes
MARKER and waits there to be killed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kope.cases.task import load_task
from kope.memory.records import DecisionIn
from kope.memory.store import ExperienceStore
from kope.ops import get_op
from kope.protocol.results import EvalResult

STEPS = 3


def main() -> None:
    hold_at = int(sys.argv[4]) if len(sys.argv) > 4 else -1
    marker = Path(sys.argv[5]) if len(sys.argv) > 5 else None
    write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), hold_at, marker)
    print("done", sys.argv[2])


def write(url: str, writer: int, runs: int, hold_at: int = -1, marker: Path | None = None) -> None:
    task = load_task(get_op("relu").task_path)
    store = ExperienceStore.open(url)
    for index in range(runs):
        with store.atomic(key=f"writer-{writer}-run-{index}"):
            record = store.ensure_task(task)
            run = store.start_run("debug", record.id, model="offline", device="cpu")
            parent = None
            for step in range(STEPS):
                source = f"# writer {writer} run {index} step {step}\nx = {step}\n"
                result = EvalResult(
                    status="fail", cases=[], cases_run="all", task="t", candidate="c", device="cpu", seed=0
                )
                made = DecisionIn(kind="edit", text=f"step {step}") if parent is not None else None
                stored = store.record_step(run.id, record.id, source, parent_id=parent, made=made, result=result)
                parent = stored.version.id
            if index == hold_at and marker is not None:
                marker.write_text("inside")
                time.sleep(120)
            store.finish_run(
                run.id,
                status="unrepaired",
                stop_reason="test",
                best_version=parent,
                summary={"writer": writer, "index": index},
            )
    store.close()


if __name__ == "__main__":
    main()
