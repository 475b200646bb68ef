"""A KernelBench-style run directory made from kope's operator suite, for tests and benchmarks.

    tasks/level1/1_relu.py                   the operator's task
    candidates/level1/1_relu/sample_0.py     its correct kernel                      → pass
    candidates/level1/1_relu/sample_1.py...  near misses from the near-miss suite    → near-miss
    candidates/level1/1_relu/sample_K.py     the kernel broken (syntax or runtime)   → broken
    candidates/level1/1_relu/sample_K+1.py   the reference passed off as a kernel    → cheat

Every file is a real kernel (or a real way to fail): the run is what a pipeline's discards look like,
with the class each candidate should get known in advance (`expected`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kope.bench.corpus import load_suite
from kope.ops import get_op

SMALL_OPS = ("relu", "sigmoid", "silu", "leaky_relu", "gelu_tanh", "bias_add")


@dataclass
class SampleRun:
    tasks: Path
    candidates: Path
    expected: dict[str, str] = field(default_factory=dict)
    """Candidate id (its path under `candidates`) → the class it should get before any repair."""


def _broken(source: str, how: int) -> str:
    """A syntax error, or (odd `how`, where the kernel launches through triton.cdiv) an AttributeError at run time."""
    if how % 2 == 1 and "triton.cdiv(" in source:
        return source.replace("triton.cdiv(", "triton.cdiv_ceil(", 1)
    return source.replace("def forward(", "def forward(:", 1)


def _cheat(task_source: str) -> str:
    return (
        task_source + "\n\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def _unused_kernel(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n\n\n"
        'class ModelNew(Model):\n    """Calls the reference and says it is a kernel."""\n'
    )


_TWO_SIZES = re.compile(r'\{"(\w+)": \d+, "(\w+)": \d+\}')


def small_cases(task_source: str) -> str:
    """The task with smaller cases (for the Triton interpreter on a small machine): three shapes that are
    no multiple of a block, one of them a single element. Tasks not sized by two names stay as they are."""
    found = _TWO_SIZES.search(task_source.split("def get_cases", 1)[-1])
    if found is None:
        return task_source
    rows, cols = found.group(1), found.group(2)
    cases = [{rows: 2, cols: 300}, {rows: 1, cols: 1}, {rows: 3, cols: 1025}]
    return task_source + f"\n\ndef get_cases():  # smaller cases (kope.triage.sample)\n    return {cases!r}\n"


def make_run(
    out: Path,
    *,
    ops: Sequence[str] = SMALL_OPS[:4],
    near_misses: int = 2,
    broken: int = 1,
    cheats: int = 1,
    good: int = 1,
    small: bool = False,
    near_miss_ops: Sequence[str] | None = None,
) -> SampleRun:
    """Write a run of len(ops) problems into `out` (tasks/ and candidates/); near misses per op as the suite
    has them (only for `near_miss_ops`, where given); `small`: the tasks get smaller cases (see `small_cases`)."""
    suite = load_suite("default")
    run = SampleRun(tasks=out / "tasks", candidates=out / "candidates")
    for number, name in enumerate(ops, 1):
        op = get_op(name)
        problem = f"{number}_{name}"
        task = run.tasks / "level1" / f"{problem}.py"
        task.parent.mkdir(parents=True, exist_ok=True)
        source = op.task_path.read_text()
        task.write_text(small_cases(source) if small else source)
        folder = run.candidates / "level1" / problem
        folder.mkdir(parents=True, exist_ok=True)
        kernel = op.kernel_path.read_text()
        samples: list[tuple[str, str]] = [(kernel, "pass") for _ in range(good)]
        wanted = near_misses if near_miss_ops is None or name in near_miss_ops else 0
        entries = [e for e in suite.entries if e.task == f"op:{name}"][:wanted]
        samples += [(suite.candidate_path(e).read_text(), "near-miss") for e in entries]
        samples += [(_broken(kernel, number + k), "broken") for k in range(broken)]
        samples += [(_cheat(task.read_text()), "cheat") for _ in range(cheats)]
        for index, (source, expected) in enumerate(samples):
            path = folder / f"sample_{index}.py"
            path.write_text(source)
            run.expected[str(path.relative_to(run.candidates))] = expected
    return run
