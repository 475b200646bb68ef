"""The `kope` command line: each command is a thin call into the library.

app.py        the command group, its sub-groups, `--version` and `--debug`
options.py    the option vocabulary every command shares (one spelling per concept)
run.py        what every command shares: input checks, library objects, progress, output, exit status
evaluate.py   eval, check, cases, diagnose, trace, doctor
repair.py     debug, regenerate, optimize
triage.py     triage
knowledge.py  kb (patterns) and memory (the experience store)
bench.py      bench mutate, suite, run, report
ops.py        ops (the operator suite) and cache
"""

from __future__ import annotations

import sys

from kope.cli import bench, evaluate, knowledge, ops, repair, triage
from kope.cli.app import app
from kope.cli.run import err

__all__ = ["app", "bench", "evaluate", "knowledge", "main", "ops", "repair", "triage"]


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        sys.exit(130)
