#!/usr/bin/env bash
# Set up (scripts/setup.sh, scripts/test-deps.sh), then lint, type-check and run the whole test suite.
# `scripts/test.sh --fast`: the fast tier only (no set-up, lint or type-check; tests marked slow and those
# that start an evaluator are left out, the smoke tests kept; see tests/conftest.py), what a developer runs
# between edits. The full suite stays in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--fast" ]; then
    bash scripts/setup.sh
    bash scripts/test-deps.sh
    .venv/bin/ruff check src tests benchmarks
    .venv/bin/ruff format --check src tests benchmarks
    .venv/bin/mypy
fi
# Two test processes by default (KOPE_TEST_WORKERS=N to change, 0 for one process): most tests wait on
# sandboxed Triton-interpreter jobs that use one core each. A file's tests stay in one process (loadfile),
# so a module's server or cluster fixture starts once.
workers="${KOPE_TEST_WORKERS:-2}"
if [ "$workers" = 0 ]; then
    .venv/bin/python -m pytest -q "$@"
else
    .venv/bin/python -m pytest -q -n "$workers" --dist loadfile "$@"
fi
