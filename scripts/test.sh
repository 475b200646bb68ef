#!/usr/bin/env bash
# Set up (scripts/setup.sh, scripts/test-deps.sh), then lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-deps.sh
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy
# Two test processes by default (KOPE_TEST_WORKERS=N to change, 0 for one process): most tests wait on
# sandboxed Triton-interpreter jobs that use one core each. A file's tests stay in one process (loadfile),
# so a module's server or cluster fixture starts once.
workers="${KOPE_TEST_WORKERS:-2}"
if [ "$workers" = 0 ]; then
    .venv/bin/python -m pytest -q "$@"
else
    .venv/bin/python -m pytest -q -n "$workers" --dist loadfile "$@"
fi
